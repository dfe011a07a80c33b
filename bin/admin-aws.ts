// The admin CLI's AWS target: placeholder until the stack outputs are fixed.
import type { AdminSession } from './admin';

export async function awsAdminDeps(_stack: string): Promise<AdminSession> {
  throw new Error('not yet');
}
