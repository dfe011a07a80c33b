// The sender the delivery worker is given (one seam for every kind of destination): an attempt with an AWS
// destination goes to the AWS sender, every other one to the HTTP sender, unchanged.
import type { OutboundRequest, WebhookSender } from '../app/webhooks/ports';
import type { AttemptOutcome } from '../domain/webhooks/delivery';

export class DestinationSender implements WebhookSender {
  constructor(
    private readonly http: WebhookSender,
    private readonly aws: WebhookSender,
  ) {}

  send(request: OutboundRequest): Promise<AttemptOutcome> {
    return request.destination ? this.aws.send(request) : this.http.send(request);
  }

  async close(): Promise<void> {
    for (const sender of [this.http, this.aws]) await (sender as { close?: () => Promise<void> }).close?.();
  }
}
