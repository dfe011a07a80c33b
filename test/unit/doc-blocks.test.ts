// How the doc-test reads the guides (test/support/doc-blocks.ts): block kinds, copied values, and the commands
// it never runs for a reader (an `npm ci` once emptied a symlinked node_modules).
import { describe, expect, it } from 'vitest';
import { forbidden, pasteCopied, segments, shellBlocks } from '../support/doc-blocks';

describe('guide shell blocks', () => {
  it('reads each ```sh block with its kind, and refuses an unknown kind', () => {
    const md =
      '# G\n```sh\necho a\n```\n```sh aws\naws s3 ls\n```\n```js\nx\n```\n```sh server\nnpm run receiver\n```\n';
    expect(shellBlocks('g.md', md).map((b) => [b.line, b.kind, b.text])).toEqual([
      [2, 'run', 'echo a'],
      [5, 'aws', 'aws s3 ls'],
      [11, 'server', 'npm run receiver'],
    ]);
    expect(() => shellBlocks('g.md', '```sh later\nx\n```\n')).toThrow(/unknown shell block kind "later"/);
  });

  it('pastes the newest printed token for `export NAME=prefix_…`, and names what cannot run as written', () => {
    const printed = '{"id":"wh_first1"} {"id":"wh_second2","signing_secret":"whsec_uim/Y+elCG="}';
    expect(pasteCopied('export SF_WEBHOOK=wh_…   # the id\ncurl x/$SF_WEBHOOK', printed)).toEqual({
      script: 'export SF_WEBHOOK=wh_second2   # the id\ncurl x/$SF_WEBHOOK',
      problems: [],
    });
    expect(pasteCopied('export S=whsec_…', printed).script).toBe('export S=whsec_uim/Y+elCG=');
    expect(pasteCopied('export K=sf_test_…', printed).problems).toEqual([
      'nothing printed so far to copy for export K=sf_test_…',
    ]);
    expect(pasteCopied('curl x/email_…/cancel   # → {…}', printed).problems).toEqual([
      'not runnable as written: curl x/email_…/cancel   # → {…}',
    ]);
  });

  it('cuts a block before each copied value, so what prints it runs first', () => {
    expect(segments('curl a\nexport A=wh_…\ncurl b\nexport B=dlv_…\ncurl c')).toEqual([
      'curl a',
      'export A=wh_…\ncurl b',
      'export B=dlv_…\ncurl c',
    ]);
  });

  it('never runs an install, the whole suite or AWS, whatever the block says', () => {
    expect(forbidden('npm ci && npm start')).toBe('npm ci');
    expect(forbidden('npm install openapi-fetch')).toBe('npm install');
    expect(forbidden('npm test')).toBe('npm test');
    expect(forbidden('npx cdk deploy --all')).toBe('npx cdk');
    expect(forbidden('npm run admin -- create-key --account a --aws')).toBe('--aws');
    expect(forbidden('aws s3 ls')).toBe('aws ');
    expect(forbidden('npm run admin -- list-accounts   # not npm ci')).toBeUndefined();
    expect(forbidden('npm run receiver')).toBeUndefined();
  });
});
