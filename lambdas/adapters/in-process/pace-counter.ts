// The pace counter in this process's memory: exact locally, where one process makes every attempt.
import type { PaceCounter } from '../../app/webhooks/pace';
import { type PaceTake, reservePace, takePace } from '../../domain/webhooks/pace';

export class InMemoryPaceCounter implements PaceCounter {
  private readonly horizon = new Map<string, number>();
  private readonly nextAt = new Map<string, number>();

  async reserve(webhookId: string, spacingMs: number, now: number): Promise<number> {
    const reserved = reservePace(this.horizon.get(webhookId), now, spacingMs);
    this.horizon.set(webhookId, reserved.horizon);
    return reserved.turn;
  }

  async take(webhookId: string, spacingMs: number, now: number): Promise<PaceTake> {
    const decided = takePace(this.nextAt.get(webhookId), now, spacingMs);
    this.nextAt.set(webhookId, decided.nextAt);
    return decided.take;
  }
}
