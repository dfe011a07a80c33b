// The browser the dashboard tests drive needs nothing from apt: the Chromium shipped in the npm registry
// (@sparticuz/chromium) unpacks from node_modules and renders a page, whether or not a system one exists.
import { accessSync, constants } from 'node:fs';
import { chromium } from 'playwright-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { findChromium, unpackNpmChromium } from '../../bin/chromium';

describe('the Chromium the browser tests use', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('is SF_CHROMIUM when it is set', async () => {
    vi.stubEnv('SF_CHROMIUM', '/opt/some/chromium');
    expect(await findChromium()).toEqual({ executablePath: '/opt/some/chromium', env: {}, source: 'SF_CHROMIUM' });
  });

  it('unpacks from the npm package into node_modules/.cache, executable, and renders a page', async () => {
    const install = await unpackNpmChromium();
    expect(install.source).toBe('@sparticuz/chromium');
    expect(install.executablePath).toMatch(/node_modules\/\.cache\/sparticuz-chromium-[\d.]+\/chromium$/);
    expect(() => accessSync(install.executablePath, constants.X_OK)).not.toThrow();
    // A second call finds the unpacked copy.
    expect((await unpackNpmChromium()).executablePath).toBe(install.executablePath);
    const browser = await chromium.launch({
      executablePath: install.executablePath,
      env: { ...process.env, ...install.env } as Record<string, string>,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
    try {
      const page = await browser.newPage();
      await page.setContent('<main><h1>Sendflow</h1></main>');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sendflow');
    } finally {
      await browser.close();
    }
  }, 60_000);
});
