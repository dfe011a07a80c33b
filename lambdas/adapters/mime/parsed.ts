// What the parse thread and its caller share without loading the parser: the empty parse (nothing could be
// read) and the scopes a parse may be asked for. Kept apart so the function's main bundle never carries postal-mime.
import type { Email } from 'postal-mime';

/** `auto`: whole if within the limits, else the header block; `headers`: the header block only. */
export type ParseScope = 'auto' | 'headers';

export const EMPTY_EMAIL: Email = Object.freeze({ headers: [], headerLines: [], attachments: [] }) as Email;
