// check:rollback's webhook receiver: one node:http server for every release of a check, so it counts each
// (endpoint, event) across the rollback. `/steady/<name>` answers 200; `/flaky/<name>` answers 500 to the first
// attempt of each event and 200 after, so every delivery to it has a retry pending right after its first attempt.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receipt {
  /** The endpoint's path, e.g. /flaky/orders: one webhook each. */
  readonly path: string;
  /** The event id (`webhook-id`): one delivery per (path, event). */
  readonly eventId: string;
  readonly type: string;
  readonly emailId: string | undefined;
  readonly status: number;
  readonly at: number;
}

export class CountingReceiver {
  readonly receipts: Receipt[] = [];
  private server: Server | undefined;
  private base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0] as string;
        const eventId = String(req.headers['webhook-id'] ?? '');
        let type = '';
        let emailId: string | undefined;
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            type?: string;
            data?: { email_id?: string };
          };
          type = body.type ?? '';
          emailId = body.data?.email_id;
        } catch {
          // Not a standard payload: counted all the same.
        }
        const seen = this.receipts.some((r) => r.path === path && r.eventId === eventId);
        const status = path.startsWith('/flaky/') && !seen ? 500 : 200;
        this.receipts.push({ path, eventId, type, emailId, status, at: Date.now() });
        res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status === 200 ? 'ok' : 'try again');
      });
    });
    await new Promise<void>((done) => this.server?.listen(0, '127.0.0.1', done));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  url(path: string): string {
    return `${this.base}${path}`;
  }

  /** Requests for one delivery: its endpoint and event. */
  attempts(path: string, eventId: string): Receipt[] {
    return this.receipts.filter((r) => r.path === path && r.eventId === eventId);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((done) => (this.server ? this.server.close(() => done()) : done()));
  }
}
