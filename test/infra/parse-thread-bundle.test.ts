// The inbound function's parse thread as it deploys: built with the command its bundling runs after the main
// bundle (lib/constructs/inbound-mail.ts, parseThreadBundling), into a folder of its own, then started as the
// function starts it. It must load with nothing beside it (no node_modules) and parse: postal-mime and the scan
// inlined. (cdk synth runs the same command; the IAM tier runs the synthesized bundle end to end.)
import { execSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../bench/bundle-build';
import { PARSE_THREAD_BUNDLE } from '../../lambdas/adapters/mime/parse-thread-module';
import { ThreadMimeParser } from '../../lambdas/adapters/mime/thread-mime-parser';
import { parseThreadBundling } from '../../lib/constructs/inbound-mail';

let out: string;
beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'sf-parse-thread-'));
  for (const command of parseThreadBundling(repoRoot, out)) execSync(command, { cwd: repoRoot, stdio: 'pipe' });
}, 60_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the parse thread bundle', () => {
  it('is one self-contained module of under 200 KB', () => {
    expect(readdirSync(out)).toEqual([PARSE_THREAD_BUNDLE]);
    expect(statSync(join(out, PARSE_THREAD_BUNDLE)).size).toBeLessThan(200_000);
  });

  it('starts as a worker thread with no options and parses a message, over-limit ones for their header block', async () => {
    const parser = new ThreadMimeParser({ worker: pathToFileURL(join(out, PARSE_THREAD_BUNDLE)), budgetMs: 10_000 });
    try {
      const ok = await parser.parse(Buffer.from('Subject: hi\r\nContent-Type: text/plain\r\n\r\nhello\r\n'));
      const over = await parser.parse(
        Buffer.from(
          `Subject: many\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${'--b\r\n\r\nx\r\n'.repeat(1_001)}--b--\r\n`,
        ),
      );

      expect(ok).toMatchObject({ scope: 'whole', problem: null, email: { subject: 'hi', text: 'hello\n' } });
      expect(over).toMatchObject({ scope: 'headers', problem: { kind: 'limit' }, email: { subject: 'many' } });
    } finally {
      await parser.close();
    }
  }, 30_000);
});
