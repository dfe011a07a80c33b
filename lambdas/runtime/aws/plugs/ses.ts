// SES v2 plugs: live-mode email with the stack's configuration set (the send worker), and sending domains as
// SES identities with Easy DKIM (the API; the reconciler re-checks pending ones). Only the SES client.
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { SesDomainProvider } from '../../../adapters/ses/ses-domains';
import { SesNotifier } from '../../../adapters/ses/ses-notifier';
import { SesEmailProvider } from '../../../adapters/ses/ses-provider';
import { trackingLookup } from '../../../app/domains/tracking';
import { createRepositories } from '../../repositories';
import type { AwsPlug } from '../services';

/** Live mode through SES; test mode stays on the simulator (createServices picks per mode). */
export const sesEmail: AwsPlug = {
  requires: ({ wiring }) => [['SF_SES_CONFIGURATION_SET', wiring.sesConfigurationSet]],
  build: (ctx) => ({
    liveProvider: new SesEmailProvider({
      // No SDK retries for sending: a retried SendEmail after a reset may be a second copy (the provider
      // retries throttling itself, and the send worker what surely did not reach SES).
      client: ctx.injected(SESv2Client) ?? new SESv2Client({ maxAttempts: 1 }),
      configurationSet: String(ctx.wiring.sesConfigurationSet),
      // Each email goes through the set of its sender domain's open/click tracking (one GetItem a minute a domain).
      tracking: trackingLookup(createRepositories(ctx.dynamo, ctx.config.tables).domains, ctx.now),
    }),
  }),
};

/** Live-mode domains as SES identities; test-mode domains never create one. */
export const sesDomains: AwsPlug = {
  // Identities are tagged with, and IAM conditioned on, the owner: the api stack's name.
  requires: ({ wiring }) => [['SF_SES_IDENTITY_OWNER', wiring.sesIdentityOwner]],
  build: (ctx) => ({
    liveDomainProvider: new SesDomainProvider(ctx.client(SESv2Client), { owner: String(ctx.wiring.sesIdentityOwner) }),
  }),
};

/**
 * The accounts' notices (app/notices) by SES from the stage's sender, SF_NOTICE_FROM. Optional: without it the
 * functions log each notice they skip. For the functions where notices arise: reputation judged (dispatcher, SES
 * events) and webhooks auto-disabled (delivery worker, the API's test sends and retries).
 */
export const sesNotices: AwsPlug = {
  requires: () => [],
  build: (ctx) =>
    ctx.wiring.noticeFrom ? { notifier: new SesNotifier(ctx.client(SESv2Client), ctx.wiring.noticeFrom) } : {},
};
