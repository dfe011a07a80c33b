// `npx tsx bench/lambda-event-size.ts`: the API Lambda event size around send bodies at three ceilings, as a table
// for docs/benchmarks.md ("Lambda event size"); API Gateway writes the body as a JSON string, escapes double it.
import { LAMBDA_SYNC_PAYLOAD_BYTES, MAX_SEND_BODY_BYTES } from '../lambdas/domain/body-ceiling';

/** A REST proxy event as API Gateway builds it, with 9,000 quotes of headers (near its 10,240-byte cap), twice. */
function eventBytes(body: string): number {
  const padding = '"'.repeat(9_000);
  const event = {
    resource: '/emails',
    path: '/emails',
    httpMethod: 'POST',
    headers: { 'X-Padding': padding },
    multiValueHeaders: { 'X-Padding': [padding] },
    requestContext: { padding: 'x'.repeat(4_096) },
    body,
    isBase64Encoded: false,
  };
  return Buffer.byteLength(JSON.stringify(event));
}

/** A valid JSON body of about `size` bytes: `unit` repeated between `prefix` and `suffix`. */
function fill(size: number, prefix: string, unit: string, suffix: string): string {
  const room = size - Buffer.byteLength(prefix + suffix);
  return prefix + unit.repeat(Math.floor(room / Buffer.byteLength(unit))) + suffix;
}

const shapes: Record<string, [string, string, string]> = {
  base64: ['{"attachments":[{"filename":"a","content":"', 'QUJD', '"}]}'],
  'escaped quotes': ['{"html":"', '\\"', '"}'],
  newlines: ['{', '\n', '}'],
  'non-ASCII': ['{"text":"', 'é漢😀', '"}'],
};
console.log(`| body ceiling | ${Object.keys(shapes).join(' | ')} |`);
console.log(
  `|---|${Object.keys(shapes)
    .map(() => '---:')
    .join('|')}|`,
);
for (const ceiling of [MAX_SEND_BODY_BYTES, 4 * 1024 * 1024, 5 * 1024 * 1024]) {
  const cells = Object.values(shapes).map(([prefix, unit, suffix]) => {
    const bytes = eventBytes(fill(ceiling, prefix, unit, suffix));
    return `${bytes.toLocaleString('en-US')}${bytes > LAMBDA_SYNC_PAYLOAD_BYTES ? ' **over**' : ''}`;
  });
  console.log(`| ${ceiling.toLocaleString('en-US')} | ${cells.join(' | ')} |`);
}
