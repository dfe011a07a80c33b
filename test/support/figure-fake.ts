// An in-memory DeliveryFigureStore (app/webhooks/delivery-figures): each webhook's hours added up as the DynamoDB
// store's ADDs add them (its shards are one here), for use-case and page tests.
import type { DeliveryFigureStore } from '../../lambdas/app/webhooks/delivery-figures';
import { addFigures, emptyHour, type HourFigures } from '../../lambdas/domain/webhooks/delivery-figures';

export class InMemoryDeliveryFigures implements DeliveryFigureStore {
  readonly hours = new Map<string, HourFigures>();
  adds = 0;

  async add(webhookId: string, hour: string, figures: HourFigures): Promise<void> {
    this.adds++;
    const key = `${webhookId}|${hour}`;
    this.hours.set(key, addFigures(this.hours.get(key) ?? emptyHour(hour), figures));
  }

  async read(webhookId: string, from: string, to: string): Promise<HourFigures[]> {
    return [...this.hours]
      .filter(([key]) => key.startsWith(`${webhookId}|`))
      .map(([, figures]) => figures)
      .filter((f) => f.hour >= from && f.hour <= to);
  }
}
