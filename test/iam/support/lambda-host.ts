// Runs one synthesized bundle in a fresh Node process (lambda-child.mjs) with the environment its template sets
// plus what the Lambda runtime would add (region, credentials: here a fake key id naming the function, and the
// stand-ins' endpoints). Invocations are bounded in time; a bundle that fails to import fails `start`.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BundledFunction } from './template';
import { REGION } from './template';

const CHILD = fileURLToPath(new URL('./lambda-child.mjs', import.meta.url));
const INVOKE_TIMEOUT_MS = 15_000;

export interface LambdaHost {
  readonly fn: BundledFunction;
  /** The fake access key id its requests are signed with. */
  readonly keyId: string;
  invoke<T = unknown>(event: unknown): Promise<T>;
  /** The tail of what it printed (logs), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export function accessKeyIdFor(fn: BundledFunction): string {
  return `AKIA${fn.service.replace(/[^A-Za-z0-9]/g, '').toUpperCase()}`;
}

export async function startLambda(
  fn: BundledFunction,
  endpoints: Record<string, string>,
  options: { clockOffsetMs?: number } = {},
): Promise<LambdaHost> {
  const keyId = accessKeyIdFor(fn);
  const child: ChildProcess = fork(CHILD, [fn.entry, fn.handlerExport], {
    execPath: process.execPath,
    execArgv: ['--enable-source-maps'],
    silent: true,
    env: {
      PATH: process.env.PATH,
      ...fn.environment,
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_ACCESS_KEY_ID: keyId,
      AWS_SECRET_ACCESS_KEY: 'stand-in-secret',
      AWS_SESSION_TOKEN: 'stand-in-session',
      AWS_LAMBDA_FUNCTION_NAME: fn.logicalId,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512',
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
      LAMBDA_TASK_ROOT: fn.entry.replace(/\/[^/]+$/, ''),
      TZ: ':UTC',
      ...endpoints,
      // Read by lambda-child.mjs only, never by the bundle.
      ...(options.clockOffsetMs ? { SF_IAM_TIER_CLOCK_OFFSET_MS: String(options.clockOffsetMs) } : {}),
    },
  });
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-6000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  const booted = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${fn.service} did not boot within 15 s\n${text}`)), 15_000);
    child.on('message', (message: { type?: string; error?: string; id?: number; result?: unknown }) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve();
      } else if (message.type === 'boot-failed') {
        clearTimeout(timer);
        reject(new Error(`${fn.service} failed to boot (${fn.entry}):\n${message.error}\n${text}`));
      } else if (message.id !== undefined) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(`${fn.service} threw: ${message.error}\n${text}`));
        else waiter?.resolve(message.result);
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const error = new Error(`${fn.service} exited (code ${code}, signal ${signal})\n${text}`);
      reject(error);
      for (const waiter of pending.values()) waiter.reject(error);
      pending.clear();
    });
  });
  try {
    await booted;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    fn,
    keyId,
    output: () => text,
    invoke<T>(event: unknown): Promise<T> {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${fn.service} did not answer within ${INVOKE_TIMEOUT_MS} ms\n${text}`));
        }, INVOKE_TIMEOUT_MS);
        pending.set(id, {
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v as T);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        child.send({ id, event });
      });
    },
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
  };
}
