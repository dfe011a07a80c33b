// The official Resend SDK pointed at a local runtime, unmodified: its base URL is the runtime's /v1 (the SDK
// appends paths such as /emails to it). Copy this for other SDK-driven tests.
import { Resend } from 'resend';
import type { TestRuntime } from './runtime';

export function resendClient(rt: Pick<TestRuntime, 'url'>, key: string): Resend {
  // rt.url is http://127.0.0.1:<port>/v1: exactly what RESEND_BASE_URL would be set to.
  return new Resend(key, { baseUrl: rt.url });
}
