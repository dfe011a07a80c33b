// Public handlers of the one-click unsubscribe link: POST unsubscribes (RFC 8058), GET only shows a page
// with a button that POSTs. No API key; rate-limited per client IP.

import * as z from 'zod';
import { resolveUnsubscribeLink, type UnsubscribeDeps, unsubscribe } from '../../app/emails/unsubscribe';
import { isOneClickBody, ONE_CLICK } from '../../domain/email/unsubscribe';
import { invalidRequest, problem } from '../../domain/field-problems';
import type { PublicRouteHandler, RequestSchemas, ResponseSchemas } from './context';
import { escapeHtml, page } from './pages';
import { htmlPage } from './response';

export function unsubscribeHandlers(deps: UnsubscribeDeps) {
  const confirm: PublicRouteHandler = async ({ params }) => {
    const { email, recipient } = await resolveUnsubscribeLink(deps, params.token ?? '');
    return page(
      'Unsubscribe',
      `<h1>Unsubscribe</h1><p>Stop emails from <strong>${escapeHtml(email.from)}</strong> to <strong>${escapeHtml(recipient)}</strong>?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
    );
  };
  const oneClick: PublicRouteHandler = async ({ params, rawBody }) => {
    if (!isOneClickBody(rawBody)) {
      throw invalidRequest([problem([], `must be ${ONE_CLICK} (RFC 8058).`)]);
    }
    const { recipient } = await unsubscribe(deps, params.token ?? '');
    return page(
      'Unsubscribed',
      `<h1>Unsubscribed</h1><p>${escapeHtml(recipient)} will get no more of these emails.</p>`,
    );
  };
  return { unsubscribePage: confirm, unsubscribe: oneClick };
}

export const responseSchemas: ResponseSchemas = {
  unsubscribePage: htmlPage('A page with a button that unsubscribes (never unsubscribes by itself)'),
  unsubscribe: htmlPage('Unsubscribed: a page saying so'),
};

const [field, value] = ONE_CLICK.split('=') as [string, string];

/** The RFC 8058 body, as the document states it (isOneClickBody also takes it as a multipart field). */
export const requestSchemas: RequestSchemas = {
  unsubscribe: { form: { schema: z.strictObject({ [field]: z.literal(value) }), required: true } },
};
