// The local runtime's inbound SMTP server (Nodemailer's smtp-server), standing in for SES receiving: RCPT for a
// domain no account receives at is 550 5.1.1, more than the recipient limit 452 4.5.3, a message over the size
// limit 552 (counted while it streams; what is over is never kept), one over a MIME limit (parts, nesting, header
// block: scanned while it streams, domain/mime-scan) 554 5.6.0; an accepted message is spooled durably before
// the 250, then handed to `deliver` (receiveEmail) one at a time. A failed try is retried with a growing delay,
// up to maxAttempts tries (counted across restarts); then the message is moved to the dead letters and handed to
// `onDeadLetter` (the receiving account is shown a failed email): never an endless retry.
// No AUTH (it is an MX, not a submission server); STARTTLS only when a key and certificate are given.
// Connections are shared fairly (domain/smtp-sessions): at most `perClient` per client address and `perDomain`
// sessions per recipient domain; a connection must begin a message within `messageStartMs` of connecting or of
// its last message (NOOP, RSET, EHLO, MAIL, RCPT do not extend it) and end it within `messageTimeoutMs`; a full
// server gives the place of a connection that waits without sending mail to a newcomer.
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import {
  breachReply,
  domainOf,
  INBOUND_MIME_LIMITS,
  MAX_INBOUND_BYTES,
  MAX_INBOUND_RECIPIENTS,
} from '../../domain/inbound';
import { type MimeLimitBreach, type MimeLimits, MimeScanner } from '../../domain/mime-scan';
import { SmtpSessionTable } from '../../domain/smtp-sessions';
import type { DeadLetter, Spool, SpoolEntry } from './inbound-spool';

export interface SmtpLimits {
  /** SIZE: larger messages get 552. */
  readonly maxBytes: number;
  readonly maxRecipients: number;
  /** Connections served at once; more are refused with 421 (or served in place of one that waits, below). */
  readonly maxConnections: number;
  /** Connections of one client (an IPv4 address, an IPv6 /64) at once; more are refused with 421. */
  readonly perClient: number;
  /** Sessions holding a recipient at one domain at once; a further RCPT there gets 451 (try later). */
  readonly perDomain: number;
  /**
   * A connection must begin a message (DATA) within this of connecting or of its last message, or it is closed
   * with 421: NOOP, RSET, EHLO, MAIL and RCPT do not extend it (NOOPs cannot hold a connection).
   */
  readonly messageStartMs: number;
  /** A message's DATA must end within this (30 MB at 250 KB/s), or the connection is closed with 421. */
  readonly messageTimeoutMs: number;
  /** With every connection taken, one waiting this long without beginning a message gives its place to a newcomer. */
  readonly evictIdleAfterMs: number;
  /** A connection that sends nothing for this long is closed. */
  readonly idleTimeoutMs: number;
  /** The longest a connection may stay, however it trickles (a slow client cannot hold a slot forever). */
  readonly sessionTimeoutMs: number;
  /** How long a message that could not be stored waits before its second try; each next wait doubles. */
  readonly retryMs: number;
  /** The longest wait between two tries. */
  readonly maxRetryMs: number;
  /** Tries before a message is moved to the dead letters. */
  readonly maxAttempts: number;
  /** How often the spool is looked at even when nothing arrives (a dead letter the operator put back). */
  readonly sweepMs: number;
  /** What a message may hold (checked while DATA streams; 554 5.6.0 past it). */
  readonly mime: MimeLimits;
}

export const DEFAULT_SMTP_LIMITS: SmtpLimits = {
  maxBytes: MAX_INBOUND_BYTES,
  maxRecipients: MAX_INBOUND_RECIPIENTS,
  maxConnections: 20,
  perClient: 5,
  perDomain: 10,
  messageStartMs: 30_000,
  messageTimeoutMs: 120_000,
  evictIdleAfterMs: 5_000,
  idleTimeoutMs: 60_000,
  sessionTimeoutMs: 10 * 60_000,
  retryMs: 5_000,
  maxRetryMs: 5 * 60_000,
  // 5, 10, 20, 40, 80 s between them: about 2.5 minutes, and a restart in between keeps the count.
  maxAttempts: 6,
  sweepMs: 60_000,
  mime: INBOUND_MIME_LIMITS,
};

export interface SmtpInboundOptions {
  readonly host: string;
  readonly port: number;
  readonly spool: Spool;
  /** Whether an account receives at the domain (RCPT is refused otherwise). */
  readonly accepts: (domain: string) => Promise<boolean>;
  /** Stores one message; throws to have it tried again later (it stays spooled meanwhile). */
  readonly deliver: (entry: SpoolEntry) => Promise<void>;
  /** Told once of a message moved to the dead letters (after its last try), with the message. */
  readonly onDeadLetter?: (entry: SpoolEntry, letter: DeadLetter) => Promise<void>;
  readonly onError: (message: string, error: unknown) => void;
  readonly limits?: Partial<SmtpLimits>;
  /** PEM key and certificate: STARTTLS is offered only with them. */
  readonly tls?: { readonly key: string; readonly cert: string };
}

export interface SmtpInbound {
  readonly port: number;
  /** Resolves once every spooled message is stored or waiting for its retry. */
  idle(): Promise<void>;
  /** Messages spooled and not yet stored. */
  pending(): number;
  /** Messages that failed every try, moved aside (oldest first). */
  deadLetters(): DeadLetter[];
  stop(): Promise<void>;
}

/** An SMTP reply: the code, and a text that never carries what the client sent beyond a checked domain. */
function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export async function startSmtpInbound(options: SmtpInboundOptions): Promise<SmtpInbound> {
  const limits = { ...DEFAULT_SMTP_LIMITS, ...options.limits };
  const delivery = new SpoolDelivery(options, limits);
  const table = new SmtpSessionTable(limits);
  /** Each admitted session's deadline: for its next message to begin, or for its DATA to end. */
  const deadlines = new Map<string, NodeJS.Timeout>();
  const arm = (id: string, ms: number, reason: string) => {
    clearTimeout(deadlines.get(id));
    deadlines.set(id, setTimeout(() => closeSession(id, reason), ms).unref());
  };
  const forget = (id: string) => {
    clearTimeout(deadlines.get(id));
    deadlines.delete(id);
    table.leave(id);
  };
  /** Closes a session's connection with a 421 (its reason); a session already gone is left alone. */
  const closeSession = (id: string, reason: string) => {
    forget(id);
    for (const connection of server.connections) {
      if (connection.id !== id) continue;
      connection.send(421, reason);
      connection.close();
    }
  };
  const waitForMessage = (id: string) =>
    arm(id, limits.messageStartMs, `No message begun within ${limits.messageStartMs / 1000} s; closing`);
  const server = new SMTPServer({
    logger: false,
    banner: 'Sendflow local inbound SMTP',
    authOptional: true,
    // RFC 3463 codes (550 5.1.1, 452 4.5.3, 552 5.3.4): what SES and the big receivers answer.
    hideENHANCEDSTATUSCODES: false,
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    size: limits.maxBytes,
    rejectOversized: true,
    maxRecipients: limits.maxRecipients,
    // A hard ceiling (connections still greeting count, and one given up for a newcomer until it closes); the
    // table below admits at most maxConnections.
    maxClients: limits.maxConnections * 2,
    socketTimeout: limits.idleTimeoutMs,
    closeTimeout: 2_000,
    onConnect(session, callback) {
      const admission = table.admit(session.id, session.remoteAddress, Date.now());
      if (!admission.admitted) {
        return callback(
          admission.reason === 'client'
            ? smtpError(421, `Too many connections from your address (at most ${limits.perClient}); try again later`)
            : smtpError(421, 'Too many connections; try again in a moment'),
        );
      }
      if (admission.evicted)
        closeSession(admission.evicted, 'Closing a connection that sent no mail, for another client');
      waitForMessage(session.id);
      callback();
    },
    onClose(session) {
      forget(session.id);
    },
    onMailFrom(_address, session, callback) {
      table.newTransaction(session.id);
      callback();
    },
    onRcptTo(address, session, callback) {
      const domain = domainOf(address.address);
      options.accepts(domain).then(
        (ok) => {
          if (!ok) return callback(smtpError(550, `No account receives mail at ${domain || 'that address'}`));
          if (!table.holdDomain(session.id, domain)) {
            return callback(
              smtpError(451, `Too many sessions for ${domain} at once (at most ${limits.perDomain}); try again later`),
            );
          }
          callback();
        },
        (error: unknown) => {
          options.onError('inbound SMTP: the recipient check failed', error);
          callback(smtpError(451, 'Try again later'));
        },
      );
    },
    onData(stream, session, callback) {
      table.beginMessage(session.id);
      if (table.has(session.id)) {
        arm(
          session.id,
          limits.messageTimeoutMs,
          `Message not received within ${limits.messageTimeoutMs / 1000} s; closing`,
        );
      }
      const ended = messageEnded(session);
      const envelope = {
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address),
        receivedAt: new Date().toISOString(),
      };
      receive(stream, options.spool, envelope, limits).then(
        (received) => {
          ended();
          if (received.kind === 'oversize') return callback(smtpError(552, 'Message exceeds the size limit'));
          if (received.kind === 'refused') {
            const reply = breachReply(received.breach);
            return callback(smtpError(reply.code, reply.message));
          }
          callback(null, `OK: queued as ${received.id}`);
          delivery.kick();
        },
        (error: unknown) => {
          ended();
          // A client that hangs up mid-message is no fault of ours: its partial message is simply dropped.
          if ((error as { code?: string }).code !== 'ECONNECTION') {
            options.onError('inbound SMTP: a message could not be spooled', error);
          }
          callback(smtpError(451, 'Could not store the message; try again later'));
        },
      );
    },
  });
  /** What ends a session's message: its domains freed, and the clock for its next message started. */
  const messageEnded = (session: SMTPServerSession) => () => {
    table.endMessage(session.id, Date.now());
    if (table.has(session.id)) waitForMessage(session.id);
  };
  server.on('error', (error) => options.onError('inbound SMTP: connection error', error));
  // A per-connection deadline: the idle time-out alone lets a client that trickles a byte a minute stay forever.
  const sockets = new Set<Socket>();
  server.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    const deadline = setTimeout(() => socket.destroy(), limits.sessionTimeoutMs).unref();
    socket.once('close', () => {
      clearTimeout(deadline);
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  // Messages a previous run accepted and did not store (a crash, a kill -9, a stop in between).
  delivery.kick();
  return {
    port: (server.server.address() as AddressInfo).port,
    idle: () => delivery.idle(),
    pending: () => options.spool.size(),
    deadLetters: () => options.spool.deadLetters(),
    async stop() {
      delivery.stop();
      for (const timer of deadlines.values()) clearTimeout(timer);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await delivery.idle();
    },
  };
}

type Received =
  | { readonly kind: 'spooled'; readonly id: string }
  | { readonly kind: 'oversize' }
  | { readonly kind: 'refused'; readonly breach: MimeLimitBreach };

/**
 * Writes DATA into a spool entry as it streams, counting bytes and scanning its MIME structure: past `maxBytes`
 * or a MIME limit the entry is dropped and the rest read and thrown away (552 / 554). Otherwise the entry is
 * committed (fsynced) and its id returned. The scan is linear and runs chunk by chunk, between other work.
 */
function receive(
  stream: SMTPServerDataStream,
  spool: Spool,
  envelope: Parameters<Spool['begin']>[0],
  limits: Pick<SmtpLimits, 'maxBytes' | 'mime'>,
): Promise<Received> {
  return new Promise((resolve, reject) => {
    const writer = spool.begin(envelope);
    const scanner = new MimeScanner(limits.mime);
    let bytes = 0;
    let over = false;
    let refused: MimeLimitBreach | null = null;
    let failed: unknown = null;
    stream.on('data', (chunk: Buffer) => {
      if (over || refused || failed) return;
      bytes += chunk.length;
      if (bytes > limits.maxBytes) {
        over = true;
        writer.discard();
        return;
      }
      scanner.feed(chunk);
      refused = scanner.breached();
      if (refused) {
        writer.discard();
        return;
      }
      try {
        writer.write(chunk);
      } catch (error) {
        failed = error;
        writer.discard();
      }
    });
    stream.once('error', (error) => {
      if (!over && !failed && !refused) writer.discard();
      reject(error);
    });
    stream.once('end', () => {
      if (failed) return reject(failed);
      if (over || stream.sizeExceeded) {
        if (!over && !refused) writer.discard();
        return resolve({ kind: 'oversize' });
      }
      if (refused) return resolve({ kind: 'refused', breach: refused });
      try {
        resolve({ kind: 'spooled', id: writer.commit() });
      } catch (error) {
        writer.discard();
        reject(error);
      }
    });
  });
}

/**
 * Hands spooled messages to `deliver` one at a time, oldest first. A failed try is counted (in the spool, so a
 * restart keeps it) and the message waits retryMs, doubling each time up to maxRetryMs; its maxAttempts-th
 * failure moves it to the dead letters and tells onDeadLetter.
 */
class SpoolDelivery {
  private running: Promise<void> | null = null;
  /** A kick while running: run once more when this run ends (a message spooled meanwhile). */
  private again = false;
  private retry: NodeJS.Timeout | undefined;
  private readonly sweep: NodeJS.Timeout;
  private stopped = false;
  /** When each message that failed may be tried again (ms since the epoch); a start tries every one at once. */
  private readonly due = new Map<string, number>();

  constructor(
    private readonly options: Pick<SmtpInboundOptions, 'spool' | 'deliver' | 'onDeadLetter' | 'onError'>,
    private readonly limits: Pick<SmtpLimits, 'retryMs' | 'maxRetryMs' | 'maxAttempts' | 'sweepMs'>,
  ) {
    this.sweep = setInterval(() => this.kick(), limits.sweepMs).unref();
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    clearInterval(this.sweep);
  }

  private async run(): Promise<void> {
    const { spool } = this.options;
    const tried = new Set<string>();
    for (;;) {
      if (this.stopped) return;
      const now = Date.now();
      const id = spool.pending().find((pending) => !tried.has(pending) && (this.due.get(pending) ?? 0) <= now);
      if (id === undefined) break;
      tried.add(id);
      const entry = spool.load(id);
      try {
        if (!entry) throw new Error(`spool entry ${id} is unreadable`);
        await this.options.deliver(entry);
        spool.remove(id);
        this.due.delete(id);
      } catch (error) {
        // A try cut short by the stop (the parse thread closed under it) is not the message's failure.
        if (this.stopped) return;
        await this.failed(id, entry, error);
      }
    }
    const waits = spool.pending().map((id) => this.due.get(id) ?? 0);
    if (waits.length && !this.stopped) {
      clearTimeout(this.retry);
      this.retry = setTimeout(() => this.kick(), Math.max(0, Math.min(...waits) - Date.now())).unref();
    }
  }

  private async failed(id: string, entry: SpoolEntry | null, error: unknown): Promise<void> {
    const { spool, onError } = this.options;
    const attempts = spool.noteFailure(id);
    if (attempts < this.limits.maxAttempts) {
      const wait = Math.min(this.limits.maxRetryMs, this.limits.retryMs * 2 ** (attempts - 1));
      this.due.set(id, Date.now() + wait);
      onError(
        `inbound SMTP: message ${id} not stored yet (try ${attempts}); it stays spooled and is tried again`,
        error,
      );
      return;
    }
    this.due.delete(id);
    // An entry that does not read is moved aside too, with what is known of it (nothing to show an account).
    const letter: DeadLetter = {
      id,
      mailFrom: entry?.mailFrom ?? '',
      recipients: [...(entry?.recipients ?? [])],
      receivedAt: entry?.receivedAt ?? '',
      bytes: entry?.raw.length ?? 0,
      attempts,
      reason: (error instanceof Error ? error.message : String(error)).slice(0, 1_000),
      deadAt: new Date().toISOString(),
    };
    spool.deadLetter(letter);
    onError(`inbound SMTP: message ${id} failed ${attempts} tries; moved to the dead letters`, error);
    try {
      if (entry) await this.options.onDeadLetter?.(entry, letter);
    } catch (failure) {
      onError(`inbound SMTP: dead letter ${id} could not be shown to its account`, failure);
    }
  }
}
