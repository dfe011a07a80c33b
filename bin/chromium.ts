// The Chromium that browser tests and the dashboard screenshot drive: `SF_CHROMIUM` if set, else a system
// Chromium (Debian's), else the headless Chromium shipped inside the npm package @sparticuz/chromium, unpacked
// once into node_modules/.cache. So `npm ci && npm test` needs nothing from apt.
import { execFileSync } from 'node:child_process';
import {
  accessSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';
import { type Browser, chromium } from 'playwright-core';
import { extract } from 'tar-fs';

const SYSTEM_CHROMIUMS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export interface ChromiumInstall {
  readonly executablePath: string;
  /** Environment the browser needs beside the caller's (bundled libraries or fonts where the system has none). */
  readonly env: Record<string, string>;
  readonly source: 'SF_CHROMIUM' | 'system' | '@sparticuz/chromium';
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where a Chromium is, unpacking the npm one on first use (concurrent callers are safe: unpack, then rename). */
export async function findChromium(): Promise<ChromiumInstall> {
  const chosen = process.env.SF_CHROMIUM;
  if (chosen) return { executablePath: chosen, env: {}, source: 'SF_CHROMIUM' };
  const system = SYSTEM_CHROMIUMS.find(isExecutable);
  if (system) return { executablePath: system, env: {}, source: 'system' };
  return unpackNpmChromium();
}

export async function unpackNpmChromium(): Promise<ChromiumInstall> {
  const modules = join(import.meta.dirname, '..', 'node_modules');
  const bin = join(modules, '@sparticuz', 'chromium', 'bin');
  const { version } = JSON.parse(readFileSync(join(bin, '..', 'package.json'), 'utf8')) as { version: string };
  const root = join(modules, '.cache', `sparticuz-chromium-${version}`);
  if (!existsSync(join(root, 'chromium'))) {
    const staging = `${root}.${process.pid}.${Date.now()}`;
    mkdirSync(staging, { recursive: true });
    try {
      await Promise.all([
        pipeline(
          createReadStream(join(bin, 'chromium.br')),
          createBrotliDecompress(),
          createWriteStream(join(staging, 'chromium'), { mode: 0o755 }),
        ),
        untar(join(bin, 'swiftshader.tar.br'), staging),
        untar(join(bin, 'fonts.tar.br'), staging),
        untar(join(bin, 'al2023.tar.br'), staging),
      ]);
      writeFileSync(
        join(staging, 'fonts.conf'),
        `<?xml version="1.0"?>\n<fontconfig><dir>${join(root, 'fonts')}</dir><cachedir>${join(root, 'fonts-cache')}</cachedir></fontconfig>\n`,
      );
      renameSync(staging, root);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      // Another process finished first: its copy is as good as ours.
      if (!existsSync(join(root, 'chromium'))) throw error;
    }
  }
  const executablePath = join(root, 'chromium');
  return { executablePath, env: bundledLibraries(executablePath, root), source: '@sparticuz/chromium' };
}

function untar(brotliTar: string, into: string): Promise<void> {
  return pipeline(createReadStream(brotliTar), createBrotliDecompress(), extract(into));
}

/**
 * The package's libraries (NSS, built for Amazon Linux) go on the library path only where the system lacks
 * them, and its fonts only where the system has no fontconfig set-up: a system's own copies are preferred.
 */
function bundledLibraries(executablePath: string, root: string): Record<string, string> {
  const env: Record<string, string> = {};
  const ldd = execFileSync('ldd', [executablePath], { encoding: 'utf8' });
  if (ldd.includes('not found')) {
    env.LD_LIBRARY_PATH = [join(root, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  }
  if (!existsSync('/etc/fonts/fonts.conf')) env.FONTCONFIG_FILE = join(root, 'fonts.conf');
  return env;
}

/** Headless Chromium with the flags this machine's closed network needs. */
export async function launchChromium(): Promise<Browser> {
  const install = await findChromium();
  return chromium.launch({
    executablePath: install.executablePath,
    headless: true,
    timeout: 30_000,
    env: { ...process.env, ...install.env } as Record<string, string>,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}
