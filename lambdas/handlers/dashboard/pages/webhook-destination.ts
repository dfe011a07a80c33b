// A webhook's AWS destination on its dashboard pages (docs/webhooks.md, "AWS destinations"): where events go, the
// role and the account's external id, and the trust and role policies to attach; an attempt's AWS code and request id.
import { html, type Safe } from '../http';
import type { AttemptItem, WebhookItem } from './views';

const KINDS = { aws_eventbridge: 'Amazon EventBridge', aws_sqs: 'Amazon SQS' } as const;

/** The section for an AWS destination; nothing for HTTP. */
export function destinationSection(hook: WebhookItem): Safe | '' {
  const d = hook.destination;
  if (!d || d.type === 'http') return '';
  const target = d.type === 'aws_eventbridge' ? ['Event bus', d.event_bus_arn] : ['Queue', d.queue_url];
  return html`<section aria-labelledby="aws-h"><h2 id="aws-h">AWS destination</h2>
<dl class="facts"><dt>Service</dt><dd>${KINDS[d.type]}</dd><dt>${target[0] ?? ''}</dt><dd class="mono">${target[1] ?? ''}</dd>
<dt>Role</dt><dd class="mono">${d.role_arn ?? ''}</dd><dt>External id</dt><dd class="mono" id="external-id">${d.external_id ?? ''}</dd></dl>
<p>Sendflow assumes the role with your account's external id (the same for all your AWS destinations). Attach this trust policy to the role:</p>
<pre id="trust-policy" class="code" tabindex="0">${JSON.stringify(d.trust_policy ?? {}, null, 2)}</pre>
<button type="button" class="secondary" data-copy="trust-policy">Copy trust policy</button>
<p>and this permission policy:</p><pre id="role-policy" class="code" tabindex="0">${JSON.stringify(d.role_policy ?? {}, null, 2)}</pre></section>`;
}

/** The attempt's answer: AWS's error code (and request id) for an AWS destination, else the HTTP status. */
export function answerText(attempt: AttemptItem): Safe | string | number {
  if (attempt.aws_error_code)
    return html`<span class="mono">${attempt.aws_error_code}</span>${attempt.aws_request_id ? html` <small class="mono">request ${attempt.aws_request_id}</small>` : ''}`;
  if (attempt.aws_request_id)
    return html`${attempt.status_code} <small class="mono">request ${attempt.aws_request_id}</small>`;
  return attempt.status_code || 'none';
}
