// Child processes for CLI tests: the local runtime (`bin/local.ts`) and the admin CLI, run as a user would.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const node = process.execPath;

export interface Spawned {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves with the first stdout match of `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited(): Promise<number | null>;
}

export function spawnScript(script: string, args: string[], env: Record<string, string>): Spawned {
  const child = spawn(node, ['--import', 'tsx', join(root, script), ...args], {
    cwd: root,
    env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited: () => exit,
    waitFor(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const tick = () => {
          const match = pattern.exec(out);
          if (match) return resolve(match);
          if (child.exitCode !== null) return reject(new Error(`process exited ${child.exitCode}: ${out}`));
          if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${pattern}: ${out}`));
          setTimeout(tick, 25);
        };
        tick();
      });
    },
  };
}

export function runScript(script: string, args: string[], env: Record<string, string>) {
  const result = spawnSync(node, ['--import', 'tsx', join(root, script), ...args], {
    cwd: root,
    env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'SILENT', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
