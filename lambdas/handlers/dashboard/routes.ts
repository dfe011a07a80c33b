// What a dashboard page module declares: its GET pages and POST actions, matched on the path below
// /v1/dashboard. Pages return content for the layout; actions return where to redirect (Post/Redirect/Get).
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { InlineImageSource } from '../../app/dashboard/inline-images';
import type { ApiClient } from './api-client';
import type { Flash } from './http';
import type { PageContext, PageView } from './layout';

export interface DashboardRequest {
  readonly api: ApiClient;
  readonly page: PageContext;
  /** The pattern's capture groups (ids), decoded. */
  readonly params: readonly string[];
  readonly query: Readonly<Record<string, string>>;
  /** The form fields of a POST (empty for a GET). */
  readonly form: URLSearchParams;
  /** Epoch ms, the deployment's clock (health windows). */
  readonly now: number;
  /**
   * The inline images of the signed-in account's email that its HTML names (Content-ID → data: URL), for the
   * preview (app/dashboard/inline-images); absent: none (placeholders).
   */
  readonly inlineImages?: (
    source: InlineImageSource,
    emailId: string,
    wanted: ReadonlySet<string>,
    htmlChars: number,
  ) => Promise<Map<string, string>>;
}

export interface PageResult extends PageView {
  /** A response of its own instead of a page in the layout (the email preview, with its own CSP). */
  readonly response?: APIGatewayProxyResult;
}

export interface ActionResult {
  /** Dashboard path to redirect to, e.g. `/webhooks/wh_1`. */
  readonly to: string;
  readonly flash?: Flash;
}

export type DashboardRoute =
  | { method: 'GET'; pattern: RegExp; page(request: DashboardRequest): Promise<PageResult> }
  | {
      method: 'POST';
      pattern: RegExp;
      action(request: DashboardRequest): Promise<ActionResult>;
      /** Where a failed action sends the person back to, with the API's error message. */
      back(params: readonly string[]): string;
      /** The form's labels of the API's fields where they differ from the usual ones (plain-words.ts). */
      labels?: Readonly<Record<string, string>>;
    };

/** An id segment: what our ids look like (letters, digits, `_`, `-`); anything else is no page of ours. */
export const ID = '([A-Za-z0-9_-]{1,128})';

export const route = {
  get: (pattern: string, page: (request: DashboardRequest) => Promise<PageResult>): DashboardRoute => ({
    method: 'GET',
    pattern: new RegExp(`^${pattern}$`),
    page,
  }),
  post: (
    pattern: string,
    action: (request: DashboardRequest) => Promise<ActionResult>,
    back: (params: readonly string[]) => string,
    labels?: Readonly<Record<string, string>>,
  ): DashboardRoute => ({
    method: 'POST',
    pattern: new RegExp(`^${pattern}$`),
    action,
    back,
    ...(labels ? { labels } : {}),
  }),
};
