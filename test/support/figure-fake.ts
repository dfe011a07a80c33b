// An in-memory DeliveryFigureStore (app/webhooks/delivery-figures): each webhook's hours added up as the DynamoDB
// store's ADDs add them (its shards are one here), for use-case and page tests.
import type { DeliveryFigureStore } from '../../lambdas/app/webhooks/delivery-figures';
import {
  type AttemptFigure,
  addFigures,
  emptyHour,
  type HourFigures,
} from '../../lambdas/domain/webhooks/delivery-figures';

export class InMemoryDeliveryFigures implements DeliveryFigureStore {
  readonly hours = new Map<string, HourFigures>();
  adds = 0;

  async add(webhookId: string, hour: string, figure: AttemptFigure): Promise<void> {
    this.adds++;
    const key = `${webhookId}|${hour}`;
    const one = emptyHour(hour);
    this.hours.set(
      key,
      addFigures(this.hours.get(key) ?? one, {
        ...one,
        [figure.outcome]: 1,
        errors: figure.errorClass ? { [figure.errorClass]: 1 } : {},
        latency: one.latency.map((_, i) => (i === figure.bucket ? 1 : 0)),
      }),
    );
  }

  async read(webhookId: string, from: string, to: string): Promise<HourFigures[]> {
    return [...this.hours]
      .filter(([key]) => key.startsWith(`${webhookId}|`))
      .map(([, figures]) => figures)
      .filter((f) => f.hour >= from && f.hour <= to);
  }
}
