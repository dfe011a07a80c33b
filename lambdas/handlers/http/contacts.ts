// HTTP handlers for /v1/contacts (full-access keys) and the public double opt-in link.
import type { APIGatewayProxyResult } from 'aws-lambda';
import * as z from 'zod';
import {
  CONTACT_STATUSES,
  type Contact,
  type ContactDeps,
  confirmContact,
  contactData,
  createContact,
  deleteContact,
  getContact,
  resolveConfirmation,
  updateContact,
} from '../../app/contacts/contacts';
import { isEmailAddress } from '../../domain/email/email';
import { GoneError } from '../../domain/errors';
import {
  type PublicRouteHandler,
  type RequestSchemas,
  type ResponseSchemas,
  type RouteHandler,
  tenantOf,
} from './context';
import { escapeHtml, page } from './pages';
import { type Body, htmlPage, isoTime, named, reply, success } from './response';
import { validate } from './validate';

const name = z.string().trim().min(1).max(100);

/** A person follows these links: a link that expired or outlived its contact gets a page saying so (410). */
async function unlessGone(render: () => Promise<APIGatewayProxyResult>): Promise<APIGatewayProxyResult> {
  try {
    return await render();
  } catch (error) {
    if (!(error instanceof GoneError)) throw error;
    const why =
      error.code === 'link_expired'
        ? 'This confirmation link has expired: links are valid for 7 days.'
        : 'This confirmation link is no longer valid: the subscription it was for was removed.';
    return page(
      'Link no longer valid',
      `<h1>Link no longer valid</h1><p>${why}</p><p>Ask the sender for a new confirmation email.</p>`,
      410,
    );
  }
}
const createBody = z.strictObject({
  email: z
    .string()
    .trim()
    .refine((e) => isEmailAddress(e) && !e.includes('<'), 'must be an email address, e.g. ada@example.com.'),
  first_name: name.optional(),
  last_name: name.optional(),
});
const updateBody = z
  .strictObject({ first_name: name.nullable().optional(), last_name: name.nullable().optional() })
  .refine((b) => Object.keys(b).length > 0, 'Give first_name or last_name (null clears it).');

const contactSchema = named(
  'Contact',
  z.strictObject({
    object: z.literal('contact'),
    id: z.string(),
    email: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    status: z.enum(CONTACT_STATUSES).meta({ description: 'pending until the contact confirms (double opt-in).' }),
    created_at: isoTime,
    updated_at: isoTime,
    subscribed_at: isoTime.nullable(),
  }),
);

const GONE_PAGE = 'A page saying the link expired (after 7 days) or outlived its contact';

const responses = {
  createContact: success(
    201,
    named(
      'ContactCreated',
      z.strictObject({
        ...contactSchema.shape,
        confirmation_url: z.string().meta({ description: 'The double opt-in link the contact is sent.' }),
      }),
    ),
    'The contact, pending its confirmation',
  ),
  listContacts: success(
    200,
    named('ContactList', z.strictObject({ object: z.literal('list'), data: z.array(contactSchema) })),
    'Every contact',
  ),
  getContact: success(200, contactSchema, 'The contact'),
  updateContact: success(200, contactSchema, 'The contact as changed'),
  deleteContact: success(
    200,
    named('ContactDeleted', z.strictObject({ object: z.literal('contact'), id: z.string(), deleted: z.literal(true) })),
    'Deleted',
  ),
  confirmContactPage: htmlPage('A page with a button that confirms (never confirms by itself)', { 410: GONE_PAGE }),
  confirmContact: htmlPage('Confirmed: a page saying so', { 410: GONE_PAGE }),
} as const;

export function contactView(contact: Contact): Body<typeof contactSchema> {
  return {
    object: 'contact',
    ...contactData(contact),
    created_at: contact.createdAt,
    updated_at: contact.updatedAt,
    subscribed_at: contact.subscribedAt ?? null,
  };
}

export function contactHandlers(deps: ContactDeps) {
  const create: RouteHandler = async ({ caller, body }) => {
    const input = validate(createBody, body ?? {});
    const { contact, confirmationUrl } = await createContact(deps, tenantOf(caller), {
      email: input.email,
      ...(input.first_name ? { firstName: input.first_name } : {}),
      ...(input.last_name ? { lastName: input.last_name } : {}),
    });
    return reply(responses.createContact, { ...contactView(contact), confirmation_url: confirmationUrl });
  };
  const list: RouteHandler = async ({ caller }) =>
    reply(responses.listContacts, {
      object: 'list',
      data: (await deps.contacts.list(tenantOf(caller))).map(contactView),
    });
  const get: RouteHandler = async ({ caller, params }) =>
    reply(responses.getContact, contactView(await getContact(deps, tenantOf(caller), params.id ?? '')));
  const update: RouteHandler = async ({ caller, params, body }) => {
    const input = validate(updateBody, body ?? {});
    const contact = await updateContact(deps, tenantOf(caller), params.id ?? '', {
      ...(input.first_name !== undefined ? { firstName: input.first_name } : {}),
      ...(input.last_name !== undefined ? { lastName: input.last_name } : {}),
    });
    return reply(responses.updateContact, contactView(contact));
  };
  const remove: RouteHandler = async ({ caller, params }) => {
    const contact = await deleteContact(deps, tenantOf(caller), params.id ?? '');
    return reply(responses.deleteContact, { object: 'contact', id: contact.id, deleted: true });
  };
  const confirmPage: PublicRouteHandler = ({ params }) =>
    unlessGone(async () => {
      const contact = await resolveConfirmation(deps, params.token ?? '');
      return page(
        'Confirm your subscription',
        `<h1>Confirm your subscription</h1><p>Subscribe <strong>${escapeHtml(contact.email)}</strong>?</p>
<form method="post"><button type="submit">Confirm</button></form>`,
      );
    });
  const confirm: PublicRouteHandler = ({ params }) =>
    unlessGone(async () => {
      const contact = await confirmContact(deps, params.token ?? '');
      return page('Subscribed', `<h1>Subscribed</h1><p>${escapeHtml(contact.email)} is confirmed. Thank you.</p>`);
    });
  return {
    createContact: create,
    listContacts: list,
    getContact: get,
    updateContact: update,
    deleteContact: remove,
    confirmContactPage: confirmPage,
    confirmContact: confirm,
  };
}

export const requestSchemas: RequestSchemas = {
  // The confirmation page's form posts no field: the token in the path is all it takes.
  confirmContact: { form: { schema: z.strictObject({}), required: false } },
  createContact: { body: createBody },
  updateContact: { body: updateBody },
};
export const responseSchemas: ResponseSchemas = responses;
