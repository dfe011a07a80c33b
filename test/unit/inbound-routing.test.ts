// Route matching of the received-email routes beside the sent-email ones (lambdas/handlers/http/routing.ts):
// literal segments win, so /emails/receiving/... never reaches /emails/{id}/... and the reverse.
import { describe, expect, it } from 'vitest';
import { matchPath } from '../../lambdas/handlers/http/routing';

const routeOf = (method: string, path: string) => {
  const match = matchPath(method, path);
  return match.kind === 'route' ? { id: match.route.id, params: match.params } : match.kind;
};

describe('received-email routes', () => {
  it('literal "receiving" wins over an email id, at every depth', () => {
    expect(routeOf('GET', '/emails/receiving')).toEqual({ id: 'listReceivedEmails', params: {} });
    expect(routeOf('GET', '/emails/receiving/rcv_1')).toEqual({ id: 'getReceivedEmail', params: { id: 'rcv_1' } });
    expect(routeOf('GET', '/emails/receiving/cancel')).toEqual({ id: 'getReceivedEmail', params: { id: 'cancel' } });
    expect(routeOf('GET', '/emails/receiving/rcv_1/attachments')).toEqual({
      id: 'listReceivedAttachments',
      params: { id: 'rcv_1' },
    });
    expect(routeOf('GET', '/emails/receiving/rcv_1/attachments/att_2')).toEqual({
      id: 'getReceivedAttachment',
      params: { id: 'rcv_1', attachmentId: 'att_2' },
    });
  });

  it('sent-email routes keep their ids', () => {
    expect(routeOf('GET', '/emails/email_1')).toEqual({ id: 'getEmail', params: { id: 'email_1' } });
    expect(routeOf('POST', '/emails/email_1/cancel')).toEqual({ id: 'cancelEmail', params: { id: 'email_1' } });
    expect(routeOf('GET', '/emails')).toEqual({ id: 'listEmails', params: {} });
  });
});
