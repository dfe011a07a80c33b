// WAF's "Content-Length above N" test: WAF compares a header's size, not its number, so "above" is a regex.

/**
 * A PCRE (and JavaScript) regex matching a header value that holds a decimal integer above `limit`, leading zeros
 * and surrounding text allowed (`Content-Length: 0003000001`, a repeated `3000001, 3000001`): WAF compares header
 * sizes, not numbers, so "above" is spelled digit by digit. No lookaround, no capturing group (WAF refuses them).
 */
export function integerAbovePattern(limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`limit must be a non-negative integer: ${limit}`);
  const digits = String(limit);
  const length = digits.length;
  // Any number with more digits than the limit (no leading zero: those are eaten by 0* below).
  const branches = [`[1-9][0-9]{${length},}`];
  // Same length: the same first i digits, then a larger digit, then anything.
  for (let i = 0; i < length; i++) {
    const digit = Number(digits[i]);
    if (digit === 9) continue;
    const rest = length - i - 1;
    branches.push(`${digits.slice(0, i)}[${digit + 1}-9]${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  return `(?:^|[^0-9])0*(?:${branches.join('|')})(?:[^0-9]|$)`;
}
