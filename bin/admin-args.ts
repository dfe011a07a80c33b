// Argument parsing for the admin CLI: pure, so every refusal (exit 2) is unit-tested.
import { parseArgs } from 'node:util';
import { MODES, type Mode } from '../lambdas/domain/api-keys';
import { isPlanName, PLAN_NAMES, type PlanName } from '../lambdas/domain/plans';
import { isScope, type Scope } from '../lambdas/domain/scopes';
import { DEFAULT_STAGE, InvalidStageError, parseStage, stackNames } from '../lib/outputs';

export type AdminCommand =
  | { name: 'create-account'; plan: PlanName }
  | { name: 'create-key'; accountId: string; mode: Mode; scopes?: Scope[]; keyName?: string }
  | { name: 'set-plan'; accountId: string; plan: PlanName }
  | { name: 'revoke-key'; accountId: string; keyId: string }
  | { name: 'list-accounts' }
  | { name: 'list-keys'; accountId: string }
  | { name: 'upgrade-emails' }
  | { name: 'upgrade-suppressions' }
  | { name: 'dashboard-revoke'; accountId: string }
  | { name: 'reputation'; accountId: string; mode: Mode }
  | { name: 'reputation-lift'; accountId: string; mode: Mode; domain?: string | null; note: string }
  | { name: 'list-inbound-failures' }
  | { name: 'retry-inbound-failure'; id: string }
  /** `help`, `--help`, `-h`, or any command with `--help`: print USAGE, exit 0. */
  | { name: 'help' }
  | { name: 'dashboard-link'; accountId: string; mode: Mode };

export interface AdminTarget {
  /** `local` (default): the running local runtime of this checkout, or its data directory. */
  readonly kind: 'local' | 'aws';
  /** The api stack whose outputs `--aws` reads: the stage's (stackNames(stage).api), or `--stack`'s. */
  readonly stack: string;
}

export class UsageError extends Error {}

export const USAGE = `usage: npm run admin -- <command> [options] [--aws [--stage NAME | --stack NAME]]

commands:
  create-account --plan <${PLAN_NAMES.join('|')}>
  create-key     --account <id> [--mode live|test] [--scopes a,b] [--name text]
  set-plan       --account <id> --plan <${PLAN_NAMES.join('|')}>
  revoke-key     --account <id> --key <key id>
  list-accounts  every account: id, plan, created, and which one \`npm start\` created (default)
  list-keys      --account <id>   its keys: id, name, mode, scopes, hint (never the secret), created, revoked
  dashboard-link --account <id> [--mode live|test]   one-time dashboard sign-in link (15 min, works once) for
                 the whole account: --mode is the mode it opens in; the dashboard switches between live and test
  dashboard-revoke --account <id>   ends every dashboard session and unused sign-in link of the account
  reputation     --account <id> [--mode live|test]   its sending reputation: bounce and complaint rates over
                 the rolling window (the account's and each sending domain's), warnings and pauses
  reputation-lift --account <id> [--mode live|test] [--domain <name>|--account-only] [--note text]
                 lifts a reputation pause (sending answers 403 sending_paused until then): every paused
                 subject of the account, or only that domain, or only the account-wide pause. What was
                 counted before the lift is not judged again; a list that keeps bouncing is paused again
  upgrade-emails upgrades emails stored by earlier versions: their tenant key (GET /v1/emails lists them),
                 their body, links and recipient states moved out of the email item, and expiresAt on emails
                 and their events (SF_EMAIL_RETENTION_DAYS, the stage's; 30 by default). Idempotent; Scans
                 the emails and emailEvents tables. Run once per stage after deploying an upgrade.
  upgrade-suppressions moves suppressions stored by earlier versions under one key per account and mode to
                 their shard (16 per tenant), then marks the table, after which sends stop reading the old keys.
                 Idempotent; Scans the suppressions table. Run once per stage after deploying an upgrade.
  list-inbound-failures   received messages that failed every try to be stored (the local runtime's dead
                 letters, <data dir>/inbound-dead): id, envelope, size, tries, the last error, and the file
  retry-inbound-failure --id <in_…>   puts one back in the spool with a fresh count of tries: a running
                 runtime stores it within a minute, a stopped one at its next start (docs/runbook.md)
  help           this text (also --help, -h, or <command> --help)

Lost the printed key? \`list-accounts\` finds the account id, \`create-key --account <id> --mode test\` makes
a new key, and \`revoke-key\` retires the old one (\`list-keys\` shows its id by its hint).

Without --aws the CLI works on the local runtime started from this checkout (or its data directory).
With --aws it works on the deployed stacks with your AWS credentials and region (AWS_PROFILE, AWS_REGION):
it reads table names and usage plan ids from the outputs of the api stack of --stage NAME (default
${DEFAULT_STAGE}, whose api stack is ${stackNames(DEFAULT_STAGE).api}; --stage staging reads ${stackNames('staging').api}).
--stack NAME names an api stack directly instead.`;

export function parseAdminArgs(argv: readonly string[]): { command: AdminCommand; target: AdminTarget } {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [name, ...extra] = positionals;
  if (values.help || name === 'help') {
    return { command: { name: 'help' }, target: { kind: 'local', stack: stackNames(DEFAULT_STAGE).api } };
  }
  const target: AdminTarget = { kind: values.aws ? 'aws' : 'local', stack: apiStack(values.stage, values.stack) };
  if (!name) throw new UsageError('missing command');
  if (extra.length) throw new UsageError(`unexpected argument: ${extra.join(' ')}`);
  const allowed: Record<string, readonly string[]> = {
    'create-account': ['plan'],
    'create-key': ['account', 'mode', 'scopes', 'name'],
    'set-plan': ['account', 'plan'],
    'revoke-key': ['account', 'key'],
    'list-accounts': [],
    'list-keys': ['account'],
    'upgrade-emails': [],
    'upgrade-suppressions': [],
    'dashboard-revoke': ['account'],
    'dashboard-link': ['account', 'mode'],
    reputation: ['account', 'mode'],
    'reputation-lift': ['account', 'mode', 'domain', 'account-only', 'note'],
    'list-inbound-failures': [],
    'retry-inbound-failure': ['id'],
  };
  const options = Object.hasOwn(allowed, name) ? allowed[name] : undefined;
  if (!options) throw new UsageError(`unknown command: ${name}`);
  const misplaced = ['plan', 'account', 'mode', 'scopes', 'name', 'key', 'domain', 'account-only', 'note', 'id'].filter(
    (option) => values[option as keyof typeof values] !== undefined && !options.includes(option),
  );
  if (misplaced.length) throw new UsageError(`${name} does not take --${misplaced.join(', --')}`);

  switch (name) {
    case 'create-account':
      return { command: { name, plan: plan(values.plan) }, target };
    case 'set-plan':
      return { command: { name, accountId: required(values.account, 'account'), plan: plan(values.plan) }, target };
    case 'revoke-key':
      return {
        command: { name, accountId: required(values.account, 'account'), keyId: required(values.key, 'key') },
        target,
      };
    case 'list-accounts':
    case 'upgrade-emails':
    case 'upgrade-suppressions':
    case 'list-inbound-failures':
      return { command: { name }, target };
    case 'retry-inbound-failure':
      return { command: { name, id: required(values.id, 'id') }, target };
    case 'list-keys':
    case 'dashboard-revoke':
      return { command: { name, accountId: required(values.account, 'account') }, target };
    case 'dashboard-link':
    case 'reputation':
      return { command: { name, accountId: required(values.account, 'account'), mode: mode(values.mode) }, target };
    case 'reputation-lift': {
      if (values.domain !== undefined && values['account-only']) {
        throw new UsageError('--domain and --account-only exclude each other');
      }
      const only = values['account-only']
        ? { domain: null }
        : values.domain !== undefined
          ? { domain: required(values.domain, 'domain').toLowerCase() }
          : {};
      return {
        command: {
          name,
          accountId: required(values.account, 'account'),
          mode: mode(values.mode),
          ...only,
          note: values.note?.trim() || 'lifted with the admin CLI',
        },
        target,
      };
    }
    default:
      return {
        command: {
          name: 'create-key',
          accountId: required(values.account, 'account'),
          mode: mode(values.mode),
          ...(values.scopes !== undefined ? { scopes: scopes(values.scopes) } : {}),
          ...(values.name !== undefined ? { keyName: values.name } : {}),
        },
        target,
      };
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      plan: { type: 'string' },
      account: { type: 'string' },
      mode: { type: 'string' },
      scopes: { type: 'string' },
      name: { type: 'string' },
      key: { type: 'string' },
      domain: { type: 'string' },
      'account-only': { type: 'boolean' },
      note: { type: 'string' },
      id: { type: 'string' },
      aws: { type: 'boolean' },
      stage: { type: 'string' },
      stack: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** `--stack` names the api stack outright; otherwise `--stage` (default DEFAULT_STAGE) derives it. */
function apiStack(stage: string | undefined, stack: string | undefined): string {
  if (stage !== undefined && stack !== undefined) throw new UsageError('--stage and --stack exclude each other');
  if (stack !== undefined) return required(stack, 'stack');
  try {
    return stackNames(parseStage(stage)).api;
  } catch (error) {
    if (error instanceof InvalidStageError) throw new UsageError(`--stage: ${error.message}`);
    throw error;
  }
}

function required(value: string | undefined, option: string): string {
  if (!value?.trim()) throw new UsageError(`--${option} is required`);
  return value.trim();
}

function plan(value: string | undefined): PlanName {
  const name = required(value, 'plan');
  if (!isPlanName(name)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}, not ${name}`);
  return name;
}

function mode(value: string | undefined): Mode {
  if (value === undefined) return 'live';
  if (!(MODES as readonly string[]).includes(value)) throw new UsageError(`--mode must be live or test, not ${value}`);
  return value as Mode;
}

function scopes(value: string): Scope[] {
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!list.length) throw new UsageError('--scopes needs at least one scope');
  const unknown = list.filter((s) => !isScope(s));
  if (unknown.length) throw new UsageError(`unknown scope: ${unknown.join(', ')}`);
  return list as Scope[];
}
