// check:rollback's releases: the checkout it runs from, and an earlier revision in a git worktree of its own with
// its own dependencies. Both are cached between runs: the worktree by commit, the installed dependencies by the
// hash of the revision's package-lock.json (none is installed when it equals this checkout's: its node_modules is
// shared). Needs git, and the revision in this clone's history (a shallow clone is deepened once).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface Release {
  /** What the report calls it: `this release` or the revision as given. */
  readonly label: string;
  /** The full commit id (this checkout's HEAD for this release). */
  readonly commit: string;
  /** A checkout of the commit with its node_modules in place. */
  readonly dir: string;
  /** How its dependencies were provided: this checkout's own, one shared, a cached install, or a new one. */
  readonly deps: 'this checkout' | 'shared (same package-lock.json)' | 'cached install' | 'installed';
}

export class ReleaseError extends Error {
  override readonly name = 'ReleaseError';
}

type Log = (line: string) => void;

function git(args: readonly string[], cwd: string): string {
  return execFileSync('git', [...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Fails with a plain message when git is not installed: CI images without it cannot run the check. */
export function requireGit(): string {
  const probe = spawnSync('git', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new ReleaseError('check:rollback needs git (it checks the earlier release out in a git worktree)');
  }
  return probe.stdout.trim();
}

export function thisRelease(root: string): Release {
  return { label: 'this release', commit: git(['rev-parse', 'HEAD'], root), dir: root, deps: 'this checkout' };
}

/**
 * The commit `rev` names. A revision missing from a shallow clone (CI checkouts often are) is fetched by deepening
 * the clone once; missing from a full clone, it does not exist here.
 */
export function resolveRevision(root: string, rev: string, log: Log): string {
  const lookup = () => spawnSync('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd: root });
  let found = lookup();
  if (found.status !== 0 && git(['rev-parse', '--is-shallow-repository'], root) === 'true') {
    log(`${rev} is not in this shallow clone: fetching the rest of its history (git fetch --unshallow)`);
    const fetched = spawnSync('git', ['fetch', '--quiet', '--unshallow'], { cwd: root, stdio: 'inherit' });
    if (fetched.status === 0) found = lookup();
  }
  if (found.status !== 0) {
    throw new ReleaseError(`${rev} names no commit of this clone (git rev-parse ${rev} failed)`);
  }
  return found.stdout.toString().trim();
}

/** Where worktrees and installs are kept: SF_ROLLBACK_CACHE, or a directory per clone under the temp directory. */
export function cacheDir(root: string): string {
  if (process.env.SF_ROLLBACK_CACHE) return resolve(process.env.SF_ROLLBACK_CACHE);
  const common = resolve(root, git(['rev-parse', '--git-common-dir'], root));
  return join(tmpdir(), `sendflow-rollback-${createHash('sha256').update(common).digest('hex').slice(0, 12)}`);
}

const lockHash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/**
 * `commit` checked out in a cached git worktree with its dependencies: this checkout's node_modules when the
 * lockfiles are the same, else `npm ci` of its own lockfile (kept for the next run under the lockfile's hash).
 */
export function prepareRelease(root: string, label: string, commit: string, log: Log): Release {
  const cache = cacheDir(root);
  const dir = join(cache, 'releases', commit.slice(0, 12));
  mkdirSync(join(cache, 'releases'), { recursive: true });
  if (!isCheckoutOf(dir, commit)) {
    rmSync(dir, { recursive: true, force: true });
    // A worktree whose directory was deleted (a cleaned /tmp) is still registered: forget it first.
    git(['worktree', 'prune'], root);
    log(`checking ${label} out in ${dir}`);
    git(['worktree', 'add', '--detach', '--force', dir, commit], root);
  }
  const lock = join(dir, 'package-lock.json');
  const ours = join(root, 'package-lock.json');
  let deps: Release['deps'];
  let modules: string;
  if (lockHash(lock) === lockHash(ours)) {
    deps = 'shared (same package-lock.json)';
    modules = join(root, 'node_modules');
  } else {
    const install = join(cache, 'deps', lockHash(lock).slice(0, 16));
    modules = join(install, 'node_modules');
    if (existsSync(join(modules, '.package-lock.json'))) deps = 'cached install';
    else {
      deps = 'installed';
      log(`installing ${label}'s dependencies from its package-lock.json (npm ci, kept in ${install})`);
      rmSync(install, { recursive: true, force: true });
      mkdirSync(install, { recursive: true });
      copyFileSync(join(dir, 'package.json'), join(install, 'package.json'));
      copyFileSync(lock, join(install, 'package-lock.json'));
      const npm = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
        cwd: install,
        stdio: ['ignore', 'inherit', 'inherit'],
        env: process.env,
      });
      if (npm.status !== 0) {
        rmSync(install, { recursive: true, force: true });
        throw new ReleaseError(`npm ci of ${label}'s package-lock.json failed (exit ${npm.status})`);
      }
    }
  }
  linkModules(join(dir, 'node_modules'), modules);
  return { label, commit, dir, deps };
}

function isCheckoutOf(dir: string, commit: string): boolean {
  if (!existsSync(join(dir, '.git'))) return false;
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' });
  const clean = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: dir, encoding: 'utf8' });
  return head.status === 0 && head.stdout.trim() === commit && clean.status === 0 && clean.stdout.trim() === '';
}

/** `link` → `target`, replacing a link to anything else (an install made for another lockfile). */
function linkModules(link: string, target: string): void {
  try {
    const stat = lstatSync(link);
    if (stat.isSymbolicLink() && readlinkSync(link) === target) return;
    if (stat.isSymbolicLink()) unlinkSync(link);
    else rmSync(link, { recursive: true, force: true });
  } catch {
    // Not there yet.
  }
  symlinkSync(target, link, 'dir');
}

/**
 * The stored formats this release writes (`formats`, its defaults or SF_STORED_FORMATS) whose first reader is not
 * in `commit`'s history: that release cannot read what this one writes. One problem each; none when it can.
 */
export function formatsUnreadableBy(
  root: string,
  rev: string,
  commit: string,
  formats: Readonly<Record<string, boolean>>,
  catalog: Readonly<Record<string, { readonly readSince: string }>>,
): string[] {
  return Object.entries(formats)
    .filter(([, written]) => written)
    .flatMap(([name]) => {
      const readSince = catalog[name]?.readSince ?? '';
      const ancestor = spawnSync('git', ['merge-base', '--is-ancestor', readSince, commit], { cwd: root });
      if (ancestor.status === 0) return [];
      if (ancestor.status === 1) {
        return [
          `stored format ${name} is written by this release, but ${rev} predates its first reader ${readSince}: ` +
            `switch it off for the stage (sendflow:storedFormats / SF_STORED_FORMATS ${name}=off) or roll back no ` +
            `further than ${readSince}`,
        ];
      }
      return [`stored format ${name}: its first reader ${readSince} is not in this clone's history`];
    });
}
