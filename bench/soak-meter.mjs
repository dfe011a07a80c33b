// Imported (`--import`) into the local runtime that `npm run bench:soak` starts. A worker thread inherits its
// parent's --import, so this also runs in dynalite's thread: each thread reports its own V8 heap, and the main
// thread answers the bench's `sample` with the process's RSS and every thread's heap used.
// Plain JavaScript, like the thread it is imported into.
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';

const channel = new BroadcastChannel('sendflow-bench-soak-meter');
channel.unref();

if (isMainThread) {
  /** threadId → heap used (bytes), as last reported. */
  const threads = new Map();
  channel.onmessage = ({ data }) => threads.set(data.threadId, data.heapUsed);
  process.on('message', (message) => {
    if (message?.type !== 'sample') return;
    const { rss, heapUsed } = process.memoryUsage();
    const threadHeap = [...threads.values()].reduce((sum, bytes) => sum + bytes, 0);
    process.send?.({ type: 'sample', rss, heapUsed, threadHeap });
  });
  process.channel?.unref();
} else {
  const report = () => channel.postMessage({ threadId, heapUsed: process.memoryUsage().heapUsed });
  report();
  setInterval(report, 1_000).unref();
}
