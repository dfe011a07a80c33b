// The API's refusals in the dashboard's words. The API names fields as a caller writes them
// ("`rate_limit_per_second` must be at least 1."); a person filled in a form whose fields have labels, so each
// problem is said with the field's label and unit ("Rate limit must be at least 1 per second.") next to that
// field, and refusals whose API message names an API call say what to do in the dashboard instead.

/** Form labels of the API's field names (the first segment of a problem's path). */
const LABELS: Readonly<Record<string, string>> = {
  url: 'Endpoint URL',
  events: 'Events',
  format: 'Format',
  description: 'Description',
  rate_limit_per_second: 'Rate limit',
  ordering: 'Ordering',
  grace_period_seconds: 'Grace period',
  since: 'From',
  until: 'Until',
  status: 'Status',
  name: 'Name',
  scopes: 'Scopes',
  email: 'Email',
  first_name: 'First name',
  last_name: 'Last name',
};

/** Units said after a number the field is compared with. */
const UNITS: Readonly<Record<string, string>> = {
  rate_limit_per_second: ' per second',
  grace_period_seconds: ' seconds',
};

/** The label of a field, `label` when the form names it otherwise (the domain form's "Domain name"). */
export function fieldLabel(field: string): string {
  const known = LABELS[field];
  if (known) return known;
  const words = field.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * One problem of a 422 in plain words: the field's label instead of its API name, the unit after its bounds.
 * `path` is the detail's dot-joined path; `message` the API's sentence, which starts with the field's name in
 * backticks. A sentence that names no field at its start is kept as it is.
 */
export function plainProblem(path: string, message: string, labels: Readonly<Record<string, string>> = {}): string {
  const field = path.split('.')[0] ?? '';
  const named = /^`[^`]+`(:?) (.*)$/s.exec(message);
  if (!field || !named) return message;
  const label = labels[field] ?? fieldLabel(field);
  const rest = (named[2] ?? '').replace(/\b(at (?:least|most)|exactly) (\d[\d,.]*)\.$/, `$1 $2${UNITS[field] ?? ''}.`);
  return named[1] ? `${label}: ${rest}` : `${label} ${rest}`;
}

/** API error codes whose message names an API call, said as what to do here. */
const CODES: Readonly<Record<string, string>> = {
  webhook_paused: 'This webhook is paused. Resume it, then try again.',
};

/** A refusal's message for the banner: the plain problems of a 422, else the dashboard's words for its code. */
export function plainMessage(
  error: { code: string; message: string; details: readonly { path: string; message: string }[] },
  labels: Readonly<Record<string, string>> = {},
): string {
  if (error.details.length) return error.details.map((d) => plainProblem(d.path, d.message, labels)).join(' ');
  return CODES[error.code] ?? error.message;
}
