// Addresses and headers between us and SES. Outgoing, as SES v2 accepts them: 7-bit ASCII. A display name with other characters becomes an RFC 2047
// encoded word, one with specials is quoted, and an internationalized domain becomes punycode. The local
// part is left alone: SES refuses a non-ASCII one, and so does the API before it (domain/email/email.ts).
import { domainToASCII } from 'node:url';

const ASCII = /^[\x20-\x7e]*$/;
/** RFC 5322 specials: a display name containing one must be a quoted string. */
const SPECIALS = /[()<>[\]:;@\\,."]/;

export function mimeAddress(value: string): string {
  const match = /^\s*(.*?)\s*<([^<>]+)>\s*$/.exec(value);
  const address = asciiDomain((match?.[2] ?? value).trim());
  const name = match?.[1]?.replace(/^"(.*)"$/, '$1').trim();
  if (!name) return address;
  return `${displayName(name)} <${address}>`;
}

/** UTF-8 bytes per encoded word: 45 bytes are 60 base64 characters, within the 75-character word limit. */
const WORD_BYTES = 45;

function displayName(name: string): string {
  if (!ASCII.test(name)) return encodedWords(name);
  if (SPECIALS.test(name)) return `"${name.replace(/(["\\])/g, '\\$1')}"`;
  return name;
}

/** RFC 2047 B-encoded words, split between characters so that none is cut in half. */
function encodedWords(text: string): string {
  const words: string[] = [];
  let current = '';
  for (const char of text) {
    if (current && Buffer.byteLength(current + char, 'utf8') > WORD_BYTES) {
      words.push(current);
      current = '';
    }
    current += char;
  }
  if (current) words.push(current);
  return words.map((word) => `=?UTF-8?B?${Buffer.from(word, 'utf8').toString('base64')}?=`).join(' ');
}

function asciiDomain(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const domain = address.slice(at + 1);
  if (ASCII.test(domain)) return address;
  return `${address.slice(0, at)}@${domainToASCII(domain) || domain}`;
}

const ENCODED_WORD = /=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=/g;

/**
 * The reverse, for headers SES reports back (commonHeaders.from, .subject): RFC 2047 encoded words decoded,
 * the whitespace between two adjacent words dropped; text without encoded words comes back unchanged.
 */
export function decodeMimeWords(value: string): string {
  return value
    .replace(/(=\?[^?\s]+\?[bBqQ]\?[^?\s]*\?=)\s+(?==\?)/g, '$1')
    .replace(ENCODED_WORD, (word, charset: string, encoding: string, text: string) => {
      try {
        const bytes =
          encoding.toUpperCase() === 'B'
            ? Buffer.from(text, 'base64')
            : Buffer.from(
                text
                  .replace(/_/g, ' ')
                  .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
                'latin1',
              );
        return new TextDecoder(charset).decode(bytes);
      } catch {
        return word;
      }
    });
}
