// AWS WAF in front of the API stage: the per-client-IP limit for requests that reach no authorizer (DESIGN §3's
// brute-force shield; the local runtime does the same in the app), a separate per-IP limit for the public
// link routes, a flood ceiling per IP, a request-body ceiling (Content-Length) the API function's event can
// hold, and two low-false-positive AWS managed rule groups. Blocks answer 429 (413, 411 for the body rules) in
// our JSON error shape.
import { Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import { CfnWebACL, CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { errorBody } from '../../lambdas/domain/error-names';
import { type RouteSpec, routes, STAGE } from '../../lambdas/manifest';
import { integerAbovePattern } from './content-length';
import { keyedPathPatterns } from './keyed-routes';

export interface ApiFirewallProps {
  readonly stage: Stage;
  /** Requests per second per client IP without a well-formed API key (the app's SF_IP_RATE_LIMIT). */
  readonly anonymousRequestsPerSecond: number;
  /** Requests per second per client IP, whatever they carry: a ceiling well above the top plan. */
  readonly requestsPerSecondPerIp: number;
  /**
   * Requests per second per client IP to the public link routes (one-click unsubscribe, confirmation): the
   * app's public-route window (SF_IP_RATE_LIMIT × PUBLIC_ROUTE_IP_FACTOR), so AWS and local agree.
   */
  readonly linkRequestsPerSecond: number;
  /**
   * Largest Content-Length let through (MAX_SEND_BODY_BYTES, the API function's SF_MAX_SEND_BODY_BYTES):
   * above it Lambda could refuse the event and API Gateway would answer a 5xx instead of our 413.
   */
  readonly maxBodyBytes: number;
}

/** Rate-based rules count over a sliding window of at least 60 s; limits are per window. */
const WINDOW_SECONDS = 60;
const RATE_LIMITED_BODY = 'rate_limited';
const TOO_LARGE_BODY = 'payload_too_large';
const LENGTH_REQUIRED_BODY = 'length_required';

/** A signed link token as lambdas/domain/tokens.ts issues it: base64url payload, '.', 43-character HMAC. */
const TOKEN_PATTERN = '[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}';

/**
 * URI paths of the public routes with a well-formed token. Clients send the stage (`/v1`) first on the
 * execute-api host and on the custom domain alike (its base path is the stage name); the stage segment is
 * optional here so the rule holds whether WAF sees the path before or after API Gateway strips a base path
 * (a path without it reaches the stage on neither host). A link path with a malformed token, or any other
 * path, does not match and counts as anonymous traffic.
 */
export function linkPathPattern(stageName: string): string {
  const literal = (text: string) => text.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
  const paths = new Set(
    (routes as readonly RouteSpec[])
      // Dashboard pages carry no signed token: they count as anonymous traffic per IP.
      .filter((route) => route.access === 'public' && !route.dashboard)
      .map((route) => {
        const parts = route.path.split('{token}');
        if (parts.some((part) => /[{}]/.test(part))) {
          throw new Error(`Public route ${route.path}: the link rule only knows the {token} parameter`);
        }
        return parts.map(literal).join(TOKEN_PATTERN);
      }),
  );
  // Non-capturing groups: WAF refuses capturing subexpressions.
  return `^(?:/${literal(stageName)})?(?:${[...paths].join('|')})$`;
}

/**
 * WAF runs before the authorizer and cannot know whether a key is valid, only whether one is present and
 * well formed (same pattern as the app's parser). A request counts as keyed, outside the anonymous per-IP
 * limit, only when it carries a well-formed key AND its method and path reach a method behind the authorizer
 * (keyedPathPatterns): there a made-up key is refused by the authorizer, whose answers are cached per key, and
 * the usage plans and the flood ceiling bound the rest. Anything else (no key, a malformed one, or any key on a
 * public route, a dashboard page, an undeclared method or an unknown path, which reach the API function without
 * the authorizer) gets the tight per-IP limit (docs/runbook.md, "WAF limits").
 */
export const WELL_FORMED_BEARER = '^[Bb][Ee][Aa][Rr][Ee][Rr] +sf_(?:live|test)_[0-9A-Za-z]{32,128}\\s*$';

export class ApiFirewall extends Construct {
  readonly webAcl: CfnWebACL;

  constructor(scope: Construct, id: string, props: ApiFirewallProps) {
    super(scope, id);
    const block429: CfnWebACL.RuleActionProperty = {
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: RATE_LIMITED_BODY,
          responseHeaders: [{ name: 'Retry-After', value: String(WINDOW_SECONDS) }],
        },
      },
    };
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName,
    });
    const managed = (priority: number, name: string): CfnWebACL.RuleProperty => ({
      name,
      priority,
      overrideAction: { none: {} },
      statement: { managedRuleGroupStatement: { vendorName: 'AWS', name } },
      visibilityConfig: visibility(name),
    });

    const linkPath: CfnWebACL.StatementProperty = {
      regexMatchStatement: {
        // The stage's name is a token here (a Ref); the API Gateway stage is always STAGE.
        regexString: linkPathPattern(STAGE),
        fieldToMatch: { uriPath: {} },
        textTransformations: [{ priority: 0, type: 'NONE' }],
      },
    };

    // A well-formed key on a method behind the authorizer: one branch per HTTP method.
    const keyed: CfnWebACL.StatementProperty = {
      andStatement: {
        statements: [
          {
            regexMatchStatement: {
              regexString: WELL_FORMED_BEARER,
              fieldToMatch: { singleHeader: { Name: 'authorization' } },
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
          anyOf(
            [...keyedPathPatterns(STAGE)].map(([method, patterns]) => ({
              andStatement: {
                statements: [
                  {
                    byteMatchStatement: {
                      searchString: method,
                      fieldToMatch: { method: {} },
                      positionalConstraint: 'EXACTLY',
                      textTransformations: [{ priority: 0, type: 'NONE' }],
                    },
                  },
                  anyOf(
                    patterns.map((regexString) => ({
                      regexMatchStatement: {
                        regexString,
                        fieldToMatch: { uriPath: {} },
                        textTransformations: [{ priority: 0, type: 'NONE' }],
                      },
                    })),
                  ),
                ],
              },
            })),
          ),
        ],
      },
    };

    // Web ACL names are unique per account and region; the stack name carries the stage.
    const name = Stack.of(this).stackName;
    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Sendflow API: per-IP limits for anonymous traffic, flood ceiling, AWS managed rules.',
      visibilityConfig: visibility(name),
      customResponseBodies: {
        [RATE_LIMITED_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify(
            errorBody({
              message: `Too many requests from this address; retry after ${WINDOW_SECONDS} s.`,
              status: 429,
              code: 'rate_limited',
              retryAfter: WINDOW_SECONDS,
            }),
          ),
        },
        [TOO_LARGE_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify(
            errorBody({
              message: `Request body too large: at most ${props.maxBodyBytes} bytes on this API; send larger attachments by path.`,
              status: 413,
              code: 'payload_too_large',
            }),
          ),
        },
        [LENGTH_REQUIRED_BODY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify(
            errorBody({
              message: 'Send the request body with a Content-Length: this API does not take chunked bodies.',
              status: 411,
              code: 'length_required',
            }),
          ),
        },
      },
      rules: [
        {
          name: 'AnonymousPerIp',
          priority: 0,
          action: block429,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              evaluationWindowSec: WINDOW_SECONDS,
              limit: props.anonymousRequestsPerSecond * WINDOW_SECONDS,
              // Link routes have their own, wider limit below: mailbox providers POST RFC 8058 one-click
              // unsubscribes from a few shared addresses, for every Sendflow sender at once, in bursts after a
              // campaign. Counted here, such a burst would be blocked at the anonymous limit. Their tokens are
              // HMAC-signed, so the tight brute-force limit buys nothing there (docs/runbook.md, "WAF limits").
              // Every method without the authorizer (dashboard pages, the API reference, 404/405 fallbacks)
              // counts here whatever Authorization header it carries: a made-up key must not buy it the keyed
              // requests' ceiling.
              scopeDownStatement: {
                andStatement: {
                  statements: [{ notStatement: { statement: keyed } }, { notStatement: { statement: linkPath } }],
                },
              },
            },
          },
          visibilityConfig: visibility('anonymous-per-ip'),
        },
        {
          name: 'LinkPerIp',
          priority: 1,
          action: block429,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              evaluationWindowSec: WINDOW_SECONDS,
              limit: props.linkRequestsPerSecond * WINDOW_SECONDS,
              scopeDownStatement: linkPath,
            },
          },
          visibilityConfig: visibility('link-per-ip'),
        },
        {
          name: 'FloodPerIp',
          priority: 2,
          action: block429,
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              evaluationWindowSec: WINDOW_SECONDS,
              limit: props.requestsPerSecondPerIp * WINDOW_SECONDS,
            },
          },
          visibilityConfig: visibility('flood-per-ip'),
        },
        // WAF sees the whole Content-Length header but at most 64 KB of a body, so the size is judged on the
        // header (a body longer than its Content-Length is cut or refused by API Gateway). A size constraint
        // would compare the header value's length in characters, not its number: a regex spells "above N".
        // After the per-IP limits, so oversized floods still count against them.
        {
          name: 'BodyTooLarge',
          priority: 3,
          action: { block: { customResponse: { responseCode: 413, customResponseBodyKey: TOO_LARGE_BODY } } },
          statement: {
            regexMatchStatement: {
              regexString: integerAbovePattern(props.maxBodyBytes),
              fieldToMatch: { singleHeader: { Name: 'content-length' } },
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
          visibilityConfig: visibility('body-too-large'),
        },
        // A chunked body has no Content-Length for the rule above to judge, and WAF sees at most 64 KB of it: one
        // of 3 to 10 MB would reach Lambda and come back a 5xx. Our clients (the SDKs, curl -d, fetch with a
        // string) send a length; a streaming client gets 411 and the fix (docs/runbook.md, "Attachments in S3").
        {
          name: 'BodyLengthUnknown',
          priority: 4,
          action: { block: { customResponse: { responseCode: 411, customResponseBodyKey: LENGTH_REQUIRED_BODY } } },
          statement: {
            regexMatchStatement: {
              regexString: '[^ \\t]',
              fieldToMatch: { singleHeader: { Name: 'transfer-encoding' } },
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
          visibilityConfig: visibility('body-length-unknown'),
        },
        // Known-bad IPs and exploit payloads (Log4Shell and the like). The common rule set is left out on
        // purpose: its XSS and 8 KB body-size rules would block ordinary HTML email bodies.
        managed(5, 'AWSManagedRulesAmazonIpReputationList'),
        managed(6, 'AWSManagedRulesKnownBadInputsRuleSet'),
      ],
    });

    new CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}

/** WAF's OR takes at least two statements: one stands alone. */
function anyOf(statements: CfnWebACL.StatementProperty[]): CfnWebACL.StatementProperty {
  if (statements.length === 1) return statements[0] as CfnWebACL.StatementProperty;
  return { orStatement: { statements } };
}
