// bench:scale's virtual clock: the Clock port the real code reads, and a timer queue the simulation's models
// (SQS, Lambda, Scheduler, endpoints) put their events on. Time moves only when every promise chain the last
// events started has run as far as it can (a macrotask turn drains the microtasks), so the real use cases, awaiting
// in-memory fakes and virtual sleeps, run exactly as they would between those instants, and hours pass in seconds.
import type { Clock } from '../../lambdas/app/ports';
import { MinHeap } from './heap';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class VirtualTime implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new MinHeap<Timer>((x, y) => x.at < y.at || (x.at === y.at && x.seq < y.seq));
  /** Timer instants processed (each one macrotask turn): the simulation's own cost. */
  instants = 0;

  constructor(start: number) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** Runs `run` at `at` (epoch ms; now if earlier), after every event already due at that instant. */
  at(at: number, run: () => void): void {
    this.timers.push({ at: Math.max(this.current, Math.ceil(at)), seq: this.seq++, run });
  }

  after(ms: number, run: () => void): void {
    this.at(this.current + ms, run);
  }

  /** A promise that resolves `ms` from now, in virtual time. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /** Whether any event is pending. */
  get busy(): boolean {
    return this.timers.size > 0;
  }

  /**
   * Runs events in time order until `end` (or `stop()` says so, checked between instants); each instant's events,
   * then every promise chain they woke, before the clock moves on. The clock ends at `end` unless stopped.
   */
  async runUntil(end: number, stop: () => boolean = () => false): Promise<void> {
    for (;;) {
      const next = this.timers.peek();
      if (!next || next.at > end || stop()) break;
      this.current = next.at;
      while (this.timers.peek()?.at === this.current) (this.timers.pop() as Timer).run();
      this.instants += 1;
      await turn();
    }
    if (!stop()) this.current = Math.max(this.current, end);
  }
}
