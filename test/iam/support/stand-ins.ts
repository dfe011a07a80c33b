// Recording stand-ins for the AWS services the bundles call: a proxy in front of DynamoDB Local and small
// node:http servers speaking enough of the SQS, EventBridge Scheduler, SES v2, Secrets Manager, API Gateway, S3 and
// STS protocols. Every request becomes a Call: who made it (the fake access key id each function is given), the IAM
// action it needs and the resource ARN (and condition keys) it is authorized against.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACCOUNT, REGION } from './template';

export interface Call {
  /** The access key id that signed the request: one per function. */
  readonly caller: string;
  /** The operation as the protocol names it, e.g. dynamodb TransactWriteItems. */
  readonly operation: string;
  readonly action: string;
  readonly resource: string;
  readonly context?: Record<string, string | string[]>;
}

export interface SentMessage {
  readonly queueArn: string;
  readonly body: string;
  readonly delaySeconds?: number;
}

export interface StandIns {
  readonly calls: Call[];
  /** Messages sent to SQS queues and schedule targets, in order: the next function's input. */
  readonly messages: SentMessage[];
  /** AWS_ENDPOINT_URL_* for the functions' environment. */
  readonly endpoints: Record<string, string>;
  /** Callers (access key ids) whose SendMessage calls fail (recorded, then answered 500), e.g. to leave outboxes. */
  readonly sqsOutage: Set<string>;
  /** The S3 stand-in's objects by `<bucket>/<key>`: a scenario deletes one to read a missing key. */
  readonly s3Objects: Map<string, Buffer>;
  stop(): Promise<void>;
}

const arn = (service: string, rest: string, region = REGION) => `arn:aws:${service}:${region}:${ACCOUNT}:${rest}`;

class AwsError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

type Handler = (req: IncomingMessage, body: string, caller: string) => Promise<{ status?: number; json: unknown }>;

async function serve(handler: Handler, record: (call: Call) => void, service: string): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const caller = /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? 'unsigned';
      handler(req, body, caller)
        .then(({ status = 200, json }) => reply(res, status, json))
        .catch((error: unknown) => {
          if (!(error instanceof AwsError)) {
            record({ caller, operation: `${req.method} ${req.url}`, action: `${service}:UNKNOWN`, resource: '*' });
          }
          const e = error instanceof AwsError ? error : new AwsError(400, 'UnknownOperation', String(error));
          res.writeHead(e.status, { 'content-type': 'application/json', 'x-amzn-errortype': e.type });
          res.end(JSON.stringify({ __type: e.type, message: e.message, Message: e.message }));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function reply(res: ServerResponse, status: number, json: unknown): void {
  const text = json === undefined ? '' : JSON.stringify(json);
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() });
  res.end(text);
}

const target = (req: IncomingMessage) => String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
const queueArnOf = (url: string) => arn('sqs', String(new URL(url).pathname.split('/').pop()));
const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

/** Starts every stand-in; DynamoDB requests are forwarded to `dynamoEndpoint` (DynamoDB Local) byte for byte. */
export async function startStandIns(dynamoEndpoint: () => string): Promise<StandIns> {
  const calls: Call[] = [];
  const messages: SentMessage[] = [];
  const record = (call: Call) => calls.push(call);
  const identities = new Map<string, Record<string, string>>();
  const sqsOutage = new Set<string>();
  const servers: Server[] = [];
  const endpoints: Record<string, string> = {};
  const add = async (envName: string, service: string, handler: Handler) => {
    const server = await serve(handler, record, service);
    servers.push(server);
    endpoints[envName] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  // DynamoDB: record what each request touches, then forward it unchanged (its CRC32 header included).
  const partitionKeys = new Map<string, string | undefined>();
  const dynamo = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks);
      const caller = /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? 'unsigned';
      const operation = target(req);
      const body = JSON.parse(raw.toString('utf8') || '{}') as DynamoBody;
      if (body.TableName && !partitionKeys.has(body.TableName))
        partitionKeys.set(body.TableName, await partitionKeyOf(dynamoEndpoint(), body.TableName));
      for (const call of dynamoCalls(operation, body, (name) => partitionKeys.get(name))) {
        record({ caller, operation, ...call });
      }
      try {
        const headers: Record<string, string> = { 'accept-encoding': 'identity' };
        for (const name of ['content-type', 'x-amz-target', 'x-amz-date']) {
          const value = req.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        // DynamoDB Local keeps one database per access key and region: every function (and the seeding client,
        // lambdas/runtime/local/dynamo.ts) must see the same one. It does not check signatures.
        headers.authorization = String(req.headers.authorization ?? '').replace(
          /Credential=[^,]+/,
          'Credential=local/20260101/local/dynamodb/aws4_request',
        );
        const answer = await fetch(dynamoEndpoint(), { method: 'POST', headers, body: raw });
        const out: Record<string, string> = {};
        for (const name of ['content-type', 'x-amz-crc32', 'x-amzn-requestid']) {
          const value = answer.headers.get(name);
          if (value) out[name] = value;
        }
        res.writeHead(answer.status, out);
        res.end(Buffer.from(await answer.arrayBuffer()));
      } catch (error) {
        res.writeHead(500);
        res.end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => dynamo.listen(0, '127.0.0.1', resolve));
  servers.push(dynamo);
  endpoints.AWS_ENDPOINT_URL_DYNAMODB = `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}`;

  await add('AWS_ENDPOINT_URL_SQS', 'sqs', async (req, body, caller) => {
    const op = target(req);
    const input = JSON.parse(body || '{}') as {
      QueueUrl: string;
      MessageBody?: string;
      DelaySeconds?: number;
      Entries?: { Id: string; MessageBody: string; DelaySeconds?: number }[];
    };
    const queueArn = queueArnOf(input.QueueUrl);
    if (op === 'SendMessage' || op === 'SendMessageBatch') {
      // SendMessageBatch is authorized as sqs:SendMessage.
      record({ caller, operation: op, action: 'sqs:SendMessage', resource: queueArn });
      if (sqsOutage.has(caller)) throw new AwsError(500, 'InternalError', 'stand-in outage');
      const entries =
        op === 'SendMessage' ? [{ Id: '0', ...input, MessageBody: String(input.MessageBody) }] : (input.Entries ?? []);
      for (const e of entries) messages.push({ queueArn, body: e.MessageBody, delaySeconds: e.DelaySeconds });
      const results = entries.map((e) => ({ Id: e.Id, MessageId: randomUUID(), MD5OfMessageBody: md5(e.MessageBody) }));
      return { json: op === 'SendMessage' ? results[0] : { Successful: results, Failed: [] } };
    }
    if (op === 'GetQueueAttributes') {
      // The bypass's look at a queue's depth (app/webhooks/bypass-delivery-queue): the messages sent to it here.
      record({ caller, operation: op, action: 'sqs:GetQueueAttributes', resource: queueArn });
      const ready = messages.filter((m) => m.queueArn === queueArn).length;
      return { json: { Attributes: { ApproximateNumberOfMessages: String(ready) } } };
    }
    throw new Error(`SQS ${op} has no stand-in`);
  });

  await add('AWS_ENDPOINT_URL_SCHEDULER', 'scheduler', async (req, body, caller) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const name = decodeURIComponent(url.pathname.replace(/^\/schedules\//, ''));
    if (!url.pathname.startsWith('/schedules/')) throw new Error(`Scheduler ${req.method} ${url.pathname}`);
    if (req.method === 'POST') {
      const input = JSON.parse(body) as {
        GroupName?: string;
        Target: { Arn: string; RoleArn: string; Input?: string };
      };
      const resource = arn('scheduler', `schedule/${input.GroupName ?? 'default'}/${name}`);
      record({ caller, operation: 'CreateSchedule', action: 'scheduler:CreateSchedule', resource });
      // The schedule's role is passed to Scheduler: that is iam:PassRole by the caller.
      record({
        caller,
        operation: 'CreateSchedule',
        action: 'iam:PassRole',
        resource: input.Target.RoleArn,
        context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
      });
      messages.push({ queueArn: input.Target.Arn, body: String(input.Target.Input ?? '') });
      return { json: { ScheduleArn: resource } };
    }
    if (req.method === 'PUT') {
      // UpdateSchedule (a send moved): the whole definition again, the role passed again.
      const input = JSON.parse(body) as { GroupName?: string; Target: { RoleArn: string } };
      const resource = arn('scheduler', `schedule/${input.GroupName ?? 'default'}/${name}`);
      record({ caller, operation: 'UpdateSchedule', action: 'scheduler:UpdateSchedule', resource });
      record({
        caller,
        operation: 'UpdateSchedule',
        action: 'iam:PassRole',
        resource: input.Target.RoleArn,
        context: { 'iam:PassedToService': 'scheduler.amazonaws.com' },
      });
      return { json: { ScheduleArn: resource } };
    }
    if (req.method === 'DELETE') {
      const group = url.searchParams.get('groupName') ?? 'default';
      const resource = arn('scheduler', `schedule/${group}/${name}`);
      record({ caller, operation: 'DeleteSchedule', action: 'scheduler:DeleteSchedule', resource });
      return { json: {} };
    }
    throw new Error(`Scheduler ${req.method} ${url.pathname}`);
  });

  const tagContext = (prefix: string, tags: Record<string, string>) =>
    Object.fromEntries(Object.entries(tags).map(([k, v]) => [`${prefix}/${k}`, v]));
  await add('AWS_ENDPOINT_URL_SESV2', 'ses', async (req, body, caller) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    if (req.method === 'POST' && path === '/v2/email/outbound-emails') {
      const input = JSON.parse(body) as { FromEmailAddress: string; ConfigurationSetName?: string };
      const domain = String(input.FromEmailAddress.replace(/.*<|>.*/g, '').split('@')[1]).toLowerCase();
      // SES authorizes a send on the identity that covers the address: the domain or a parent of it.
      const identity = [...identities.keys()].find((d) => domain === d || domain.endsWith(`.${d}`)) ?? domain;
      record({
        caller,
        operation: 'SendEmail',
        action: 'ses:SendEmail',
        resource: arn('ses', `identity/${identity}`),
        context: tagContext('aws:ResourceTag', identities.get(identity) ?? {}),
      });
      if (input.ConfigurationSetName) {
        const resource = arn('ses', `configuration-set/${input.ConfigurationSetName}`);
        record({ caller, operation: 'SendEmail', action: 'ses:SendEmail', resource });
      }
      messages.push({ queueArn: 'ses:outbound', body });
      return { json: { MessageId: `0100${randomUUID()}-000000` } };
    }
    if (req.method === 'POST' && path === '/v2/email/identities') {
      const input = JSON.parse(body) as { EmailIdentity: string; Tags?: { Key: string; Value: string }[] };
      const name = input.EmailIdentity.toLowerCase();
      const tags = Object.fromEntries((input.Tags ?? []).map((t) => [t.Key, t.Value]));
      const resource = arn('ses', `identity/${name}`);
      const context = { ...tagContext('aws:RequestTag', tags), 'aws:TagKeys': Object.keys(tags) };
      record({ caller, operation: 'CreateEmailIdentity', action: 'ses:CreateEmailIdentity', resource, context });
      // Tags on create are also authorized as ses:TagResource.
      if (input.Tags?.length) {
        record({ caller, operation: 'CreateEmailIdentity', action: 'ses:TagResource', resource, context });
      }
      if (identities.has(name)) throw new AwsError(400, 'AlreadyExistsException', `${name} already exists`);
      identities.set(name, tags);
      return { json: { IdentityType: 'DOMAIN', VerifiedForSendingStatus: false, DkimAttributes: dkim('PENDING') } };
    }
    const match = /^\/v2\/email\/identities\/([^/]+)$/.exec(path);
    if (match) {
      const name = decodeURIComponent(String(match[1])).toLowerCase();
      const tags = identities.get(name);
      const op = req.method === 'DELETE' ? 'DeleteEmailIdentity' : 'GetEmailIdentity';
      const resource = arn('ses', `identity/${name}`);
      record({
        caller,
        operation: op,
        action: `ses:${op}`,
        resource,
        context: tagContext('aws:ResourceTag', tags ?? {}),
      });
      if (!tags) throw new AwsError(404, 'NotFoundException', `${name} does not exist`);
      if (op === 'DeleteEmailIdentity') {
        identities.delete(name);
        return { json: {} };
      }
      return {
        json: {
          IdentityType: 'DOMAIN',
          VerifiedForSendingStatus: true,
          VerificationStatus: 'SUCCESS',
          DkimAttributes: dkim('SUCCESS'),
          Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
        },
      };
    }
    throw new Error(`SES ${req.method} ${path}`);
  });

  // One value per secret, as Secrets Manager keeps it: a link one function signs, another verifies (the API
  // function and the public function read the same signing secret).
  const secretValues = new Map<string, string>();
  await add('AWS_ENDPOINT_URL_SECRETS_MANAGER', 'secretsmanager', async (req, body, caller) => {
    const op = target(req);
    if (op !== 'GetSecretValue') throw new Error(`Secrets Manager ${op}`);
    const { SecretId } = JSON.parse(body) as { SecretId: string };
    const resource = SecretId.startsWith('arn:') ? SecretId : arn('secretsmanager', `secret:${SecretId}-AbCdEf`);
    record({ caller, operation: op, action: 'secretsmanager:GetSecretValue', resource });
    const value = secretValues.get(resource) ?? 'x'.repeat(24) + randomUUID();
    secretValues.set(resource, value);
    return { json: { ARN: resource, Name: SecretId, SecretString: value, VersionId: 'v1' } };
  });

  await add('AWS_ENDPOINT_URL_API_GATEWAY', 'apigateway', async (req, _body, caller) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    // FlushStageAuthorizersCache: DELETE /restapis/{id}/stages/{stage}/cache/authorizers.
    if (req.method === 'DELETE' && /^\/restapis\/[^/]+\/stages\/[^/]+\/cache\/authorizers$/.test(path)) {
      record({
        caller,
        operation: 'FlushStageAuthorizersCache',
        action: 'apigateway:DELETE',
        resource: `arn:aws:apigateway:${REGION}::${path}`,
      });
      return { status: 202, json: {} };
    }
    throw new Error(`API Gateway ${req.method} ${path}`);
  });

  // S3 (path style, as the SDK addresses a bucket on an IP endpoint): objects kept in a map; a PUT with tags is
  // also s3:PutObjectTagging, as IAM authorizes it; a missing key is 403 AccessDenied, as S3 tells our roles (a
  // HEAD's 403 without a body, and IAM authorizes a HEAD as s3:GetObject); a DELETE removes the key (204 either way).
  const objects = new Map<string, Buffer>();
  const s3 = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const caller = /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? 'unsigned';
      const path = decodeURIComponent(new URL(String(req.url), 'http://s3').pathname).replace(/^\/+/, '');
      const resource = `arn:aws:s3:::${path}`;
      if (req.method === 'PUT') {
        record({ caller, operation: 'PutObject', action: 's3:PutObject', resource });
        if (req.headers['x-amz-tagging']) {
          record({ caller, operation: 'PutObject', action: 's3:PutObjectTagging', resource });
        }
        objects.set(path, Buffer.concat(chunks));
        res.writeHead(200, { etag: `"${md5(path)}"` });
        res.end();
        return;
      }
      if (req.method === 'GET') {
        record({ caller, operation: 'GetObject', action: 's3:GetObject', resource });
        const body = objects.get(path);
        if (!body) {
          // As S3 answers a missing key to a caller without s3:ListBucket on the bucket (none of our roles has it).
          res.writeHead(403, { 'content-type': 'application/xml' });
          res.end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
        res.end(body);
        return;
      }
      if (req.method === 'HEAD') {
        record({ caller, operation: 'HeadObject', action: 's3:GetObject', resource });
        const body = objects.get(path);
        res.writeHead(body ? 200 : 403, body ? { 'content-length': String(body.length) } : {});
        res.end();
        return;
      }
      if (req.method === 'DELETE') {
        // S3 answers 204 whether the key was there or not.
        record({ caller, operation: 'DeleteObject', action: 's3:DeleteObject', resource });
        objects.delete(path);
        res.writeHead(204);
        res.end();
        return;
      }
      record({ caller, operation: `${req.method} ${req.url}`, action: 's3:UNKNOWN', resource: '*' });
      res.writeHead(400);
      res.end();
    });
  });
  await new Promise<void>((resolve) => s3.listen(0, '127.0.0.1', resolve));
  servers.push(s3);
  endpoints.AWS_ENDPOINT_URL_S3 = `http://127.0.0.1:${(s3.address() as AddressInfo).port}`;

  // EventBridge (AWS destinations): PutEvents on a customer's bus, signed with the assumed role's session (the
  // customer's call, checked against no role of ours); answered as AWS does, one entry with its EventId.
  await add('AWS_ENDPOINT_URL_EVENTBRIDGE', 'events', async (req, body, caller) => {
    const op = target(req);
    if (op !== 'PutEvents') throw new Error(`EventBridge ${op} has no stand-in`);
    const input = JSON.parse(body || '{}') as { Entries?: { EventBusName?: string }[] };
    for (const entry of input.Entries ?? [])
      record({ caller, operation: op, action: 'events:PutEvents', resource: String(entry.EventBusName) });
    return { json: { FailedEntryCount: 0, Entries: (input.Entries ?? []).map(() => ({ EventId: randomUUID() })) } };
  });

  // STS (AWS destinations): AssumeRole of a customer's role, authorized with its external id (sts:ExternalId) as
  // the condition key; answered (AWS Query protocol, XML) with credentials of the customer's role, whose own calls
  // (the customer's queue or bus) are no function's and so are checked against no role here.
  const sts = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const caller = /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? 'unsigned';
      const operation = form.get('Action') ?? '';
      if (operation !== 'AssumeRole') {
        record({ caller, operation, action: 'sts:UNKNOWN', resource: '*' });
        res.writeHead(400, { 'content-type': 'text/xml' });
        res.end('<ErrorResponse><Error><Code>InvalidAction</Code></Error></ErrorResponse>');
        return;
      }
      const externalId = form.get('ExternalId');
      record({
        caller,
        operation,
        action: 'sts:AssumeRole',
        resource: String(form.get('RoleArn')),
        context: externalId ? { 'sts:ExternalId': externalId } : {},
      });
      const expires = new Date(Date.now() + 900_000).toISOString();
      res.writeHead(200, { 'content-type': 'text/xml', 'x-amzn-requestid': randomUUID() });
      res.end(
        `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
          `<AccessKeyId>ASIACUSTOMERROLE</AccessKeyId><SecretAccessKey>customer-secret</SecretAccessKey>` +
          `<SessionToken>customer-session</SessionToken><Expiration>${expires}</Expiration></Credentials>` +
          `<AssumedRoleUser><AssumedRoleId>AROA:sendflow</AssumedRoleId><Arn>${form.get('RoleArn')}</Arn></AssumedRoleUser>` +
          `</AssumeRoleResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
      );
    });
  });
  await new Promise<void>((resolve) => sts.listen(0, '127.0.0.1', resolve));
  servers.push(sts);
  endpoints.AWS_ENDPOINT_URL_STS = `http://127.0.0.1:${(sts.address() as AddressInfo).port}`;

  // Every other service (AWS_ENDPOINT_URL, which the service-specific variables override): a call to it is
  // recorded as unknown, so a new SDK client in a bundle fails the tier until it has a stand-in and a check.
  await add('AWS_ENDPOINT_URL', 'unknown', async (req, _body, caller) => {
    const service = /Credential=[^/]+\/[^/]+\/[^/]+\/([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? 'unknown';
    const operation = `${req.method} ${req.url} ${req.headers['x-amz-target'] ?? ''}`.trim();
    record({ caller, operation, action: `${service}:UNKNOWN`, resource: '*' });
    throw new AwsError(400, 'UnknownOperationException', `${service} has no stand-in`);
  });

  return {
    calls,
    messages,
    endpoints,
    sqsOutage,
    s3Objects: objects,
    stop: () =>
      Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))).then(() => {}),
  };
}

function dkim(status: string) {
  return { SigningEnabled: true, Status: status, Tokens: ['tok1', 'tok2', 'tok3'], SigningAttributesOrigin: 'AWS_SES' };
}

type DynamoBody = {
  TableName?: string;
  IndexName?: string;
  /** A single-item operation's key (GetItem, UpdateItem, DeleteItem) or item (PutItem), in DynamoDB JSON. */
  Key?: Record<string, Record<string, unknown>>;
  Item?: Record<string, Record<string, unknown>>;
  RequestItems?: Record<string, unknown>;
  TransactItems?: Record<string, { TableName: string }>[];
};

/** A table's partition key name, from DynamoDB Local (undefined when it has no such table). */
async function partitionKeyOf(endpoint: string, table: string): Promise<string | undefined> {
  const answer = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.DescribeTable',
      authorization:
        'AWS4-HMAC-SHA256 Credential=local/20260101/local/dynamodb/aws4_request, SignedHeaders=host, Signature=x',
    },
    body: JSON.stringify({ TableName: table }),
  });
  const { Table } = (await answer.json()) as { Table?: { KeySchema?: { AttributeName: string; KeyType: string }[] } };
  return Table?.KeySchema?.find((key) => key.KeyType === 'HASH')?.AttributeName;
}

/**
 * What a DynamoDB request is authorized as: one action per table (and index) it touches. A single-item operation
 * carries `dynamodb:LeadingKeys` (its partition key's value) when `partitionKey` names the table's key, so a grant
 * limited to some partitions is checked as IAM would.
 */
export function dynamoCalls(
  operation: string,
  body: DynamoBody,
  partitionKey: (table: string) => string | undefined = () => undefined,
): { action: string; resource: string; context?: Record<string, string[]> }[] {
  const table = (name: string, index?: string) => arn('dynamodb', `table/${name}${index ? `/index/${index}` : ''}`);
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    return Object.keys(body.RequestItems ?? {}).map((name) => ({
      action: `dynamodb:${operation}`,
      resource: table(name),
    }));
  }
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const actions: Record<string, string> = {
      ConditionCheck: 'ConditionCheckItem',
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      Get: 'GetItem',
    };
    return (body.TransactItems ?? []).flatMap((item) =>
      Object.entries(item).map(([kind, spec]) => ({
        action: `dynamodb:${actions[kind] ?? kind}`,
        resource: table(spec.TableName),
      })),
    );
  }
  if (!body.TableName) return [{ action: `dynamodb:${operation}`, resource: arn('dynamodb', 'table/*') }];
  const name = partitionKey(body.TableName);
  const leading = name === undefined ? undefined : (body.Key ?? body.Item)?.[name];
  const value = leading && Object.values(leading)[0];
  return [
    {
      action: `dynamodb:${operation}`,
      resource: table(body.TableName, body.IndexName),
      ...(value === undefined ? {} : { context: { 'dynamodb:LeadingKeys': [String(value)] } }),
    },
  ];
}
