// Open listen polls per account, counted in this process's memory: exact in the local runtime (one process holds
// every poll); on AWS a poll answers at once (SF_LISTEN_MAX_WAIT_SECONDS=0), so a container holds one at a time.
import type { OpenPolls } from '../../app/listen/ports';

export class InProcessOpenPolls implements OpenPolls {
  private readonly open = new Map<string, number>();

  tryOpen(accountId: string, limit: number): (() => void) | null {
    const count = this.open.get(accountId) ?? 0;
    if (count >= limit) return null;
    this.open.set(accountId, count + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.open.get(accountId) ?? 1) - 1;
      if (left > 0) this.open.set(accountId, left);
      else this.open.delete(accountId);
    };
  }

  /** The account's open polls now. */
  count(accountId: string): number {
    return this.open.get(accountId) ?? 0;
  }
}
