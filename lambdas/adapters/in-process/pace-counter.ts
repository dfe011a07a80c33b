// The pace counter in this process's memory: exact locally, where one process makes every attempt.
import type { PaceCounter } from '../../app/webhooks/pace';
import { type PaceTake, takePace } from '../../domain/webhooks/pace';

export class InMemoryPaceCounter implements PaceCounter {
  private readonly nextAt = new Map<string, number>();

  async take(webhookId: string, spacingMs: number, now: number): Promise<PaceTake> {
    const decided = takePace(this.nextAt.get(webhookId), now, spacingMs);
    this.nextAt.set(webhookId, decided.nextAt);
    return decided.take;
  }
}
