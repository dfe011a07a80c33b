// Public handlers of the one-click unsubscribe link: POST unsubscribes (RFC 8058), GET only shows a page
// with a button that POSTs. No API key; rate-limited per client IP.
import { resolveUnsubscribeLink, type UnsubscribeDeps, unsubscribe } from '../../app/emails/unsubscribe';
import { isOneClickBody, ONE_CLICK } from '../../domain/email/unsubscribe';
import { ValidationError } from '../../domain/errors';
import type { PublicRouteHandler } from './context';
import { escapeHtml, page } from './pages';

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
      throw new ValidationError('The request body is invalid.', {
        details: [{ path: 'body', message: `Expected ${ONE_CLICK} (RFC 8058).` }],
      });
    }
    const { recipient } = await unsubscribe(deps, params.token ?? '');
    return page(
      'Unsubscribed',
      `<h1>Unsubscribed</h1><p>${escapeHtml(recipient)} will get no more of these emails.</p>`,
    );
  };
  return { unsubscribePage: confirm, unsubscribe: oneClick };
}
