// The authorizer's context map: how a Principal crosses API Gateway (string values only) to the handlers.
import * as z from 'zod';
import type { Principal } from '../app/ports';
import { MODES } from '../domain/api-keys';
import { PLAN_NAMES } from '../domain/plans';
import { SCOPES } from '../domain/scopes';

export type AuthorizerContext = Record<string, string>;

export function toAuthorizerContext(principal: Principal): AuthorizerContext {
  return {
    accountId: principal.accountId,
    keyId: principal.keyId,
    mode: principal.mode,
    scopes: principal.scopes.join(','),
    plan: principal.plan,
    ...(principal.sendingDomain ? { sendingDomain: principal.sendingDomain } : {}),
  };
}

const contextSchema = z.object({
  accountId: z.string().min(1),
  keyId: z.string().min(1),
  mode: z.enum(MODES),
  scopes: z
    .string()
    .transform((s) => (s ? s.split(',') : []))
    .pipe(z.array(z.enum(SCOPES))),
  plan: z.enum(PLAN_NAMES),
  sendingDomain: z.string().min(1).optional(),
});

/** The Principal in an API Gateway event, or null when no authorizer ran (catch-all and public routes). */
export function fromAuthorizerContext(context: unknown): Principal | null {
  const parsed = contextSchema.safeParse(context);
  return parsed.success ? parsed.data : null;
}
