// The custom metric series a stage can publish in a month, each billed as a custom metric for every hour it
// receives data (bench/cost/prices.ts): every metric's total, DeliveriesFailed by each error class, and
// ApiRequests by each route and each status the route answers with. The statuses are the OpenAPI document's for
// the route (generated from the same route list and schemas as the handlers), without its 401 (the authorizer
// answers those: the function never sees the request) and with its `default` read as a 500, plus a 400 for a
// JSON body that does not parse; the dashboard's pages (left out of that document) as a page answers; and the
// unmatched route's 404 and 405. An upper bound: a series that gets no data in an hour costs nothing that hour.

import { METRIC_DIMENSIONS as D, METRIC_NAMES as M } from '../../lambdas/domain/metric-names';
import { ERROR_CLASSES } from '../../lambdas/domain/webhooks/error-class';
import { buildOpenApi } from '../../lambdas/handlers/http/openapi';
import { UNMATCHED_ROUTE } from '../../lambdas/handlers/middleware/request-log';
import { routes } from '../../lambdas/manifest';

interface Operation {
  readonly operationId: string;
  readonly responses: Record<string, unknown>;
  readonly requestBody?: { readonly content?: Record<string, unknown> };
}

/** What a dashboard page answers: the page (or a form post's redirect), a refused session or CSRF token, a missing resource, its budget, a failure. */
const DASHBOARD_STATUSES = {
  GET: ['200', '403', '404', '429', '500'],
  POST: ['303', '400', '403', '404', '429', '500'],
};

/** Every (route, status) an API function can report, as `route status`. */
export function apiRouteStatuses(): string[] {
  const doc = buildOpenApi() as { paths: Record<string, Record<string, Operation>> };
  const pairs = new Set<string>();
  for (const methods of Object.values(doc.paths)) {
    for (const op of Object.values(methods)) {
      for (const status of Object.keys(op.responses)) {
        if (status === '401') continue;
        pairs.add(`${op.operationId} ${status === 'default' ? '500' : status}`);
      }
      if (op.requestBody?.content?.['application/json']) pairs.add(`${op.operationId} 400`);
    }
  }
  for (const route of routes) {
    if (!('dashboard' in route && route.dashboard)) continue;
    for (const status of DASHBOARD_STATUSES[route.method === 'GET' ? 'GET' : 'POST'])
      pairs.add(`${route.id} ${status}`);
  }
  pairs.add(`${UNMATCHED_ROUTE} 404`);
  pairs.add(`${UNMATCHED_ROUTE} 405`);
  return [...pairs].sort();
}

/** Every series, as `Metric{dimension=value,…}` (the service dimension left out: one stage has one value). */
export function metricSeries(): string[] {
  const series = Object.values(M).map((name) => `${name}{}`);
  for (const errorClass of ERROR_CLASSES) series.push(`${M.deliveriesFailed}{${D.errorClass}=${errorClass}}`);
  for (const pair of apiRouteStatuses()) {
    const [route, status] = pair.split(' ');
    series.push(`${M.apiRequests}{${D.route}=${route},${D.status}=${status}}`);
  }
  return series;
}
