import * as fs from 'node:fs';
import { Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { routesOf } from '../../src/openapi/route-catalog';
import { Contract, CONTRACT_COPY, findContractFile, findSharedContract, parseContract } from '../support/contract-endpoints';
import { contractProblems, operationOf, validateOpenApi } from '../support/openapi-checks';
import { ADMIN_TOKEN, Client, newTenant, request, startService } from '../support/service-harness';
import { exampleSources, until } from '../support/tenant-code';
import { WebhookReceiver } from '../support/webhook-receiver';
import { zipSources } from '../support/zip-writer';

type Svc = Awaited<ReturnType<typeof startService>>;

describe('GET /openapi.json and GET /docs', () => {
  let svc: Svc;
  let a: Client;
  let text: string;
  let doc: Record<string, any>;
  let contract: Contract;
  let receiver: WebhookReceiver;
  let check: AnswerCheck;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    contract = parseContract(fs.readFileSync(findContractFile(), 'utf8'));
    receiver = await new WebhookReceiver().start();
    svc = await startService({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
    a = await newTenant(svc.url, 'openapi');
    // Without a key: the document and the page are public, like /health.
    const res = await fetch(`${svc.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    text = await res.text();
    doc = JSON.parse(text);
    check = answerCheck(doc);
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
    await receiver?.stop();
  });

  it("checks against the contract itself: the repository's copy is the team's file, byte for byte, where that file is at hand", () => {
    const shared = findSharedContract();
    // A fresh clone in CI has only the copy; on the team's machines a contract change not copied fails here.
    if (shared) expect(fs.readFileSync(CONTRACT_COPY, 'utf8')).toBe(fs.readFileSync(shared, 'utf8'));
    else expect(findContractFile()).toBe(process.env.INTERFACE_SPEC ?? CONTRACT_COPY);
  });

  it('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator, every $ref resolved)', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(validateOpenApi(text)).toEqual({ valid: true, version: '3.1' });
  });

  it('the validator refuses a broken document (the check above can fail)', () => {
    const broken = structuredClone(doc);
    broken.paths['/health'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Nope' };
    expect(validateOpenApi(JSON.stringify(broken)).valid).toBe(false);
  });

  it('holds every path, status, error code and response field the contract names, earlier shapes included', () => {
    // The contract's own headings, read from the file: enough of them that a parser gone blind cannot pass.
    expect(contract.endpoints.length).toBeGreaterThanOrEqual(17);
    expect(contract.endpoints).toContainEqual(expect.objectContaining({ method: 'POST', path: '/events', statuses: [201] }));
    expect(contract.endpoints).toContainEqual(
      expect.objectContaining({ method: 'GET', path: '/projections/{id}/state/{key}', statuses: [200, 202, 404] }),
    );
    expect(contract.earlierShapes.length).toBeGreaterThanOrEqual(6);
    expect(contract.errors).toContainEqual({ status: 404, code: 'NO_REDUCER_BOUND' });
    expect([...new Set(contractProblems(doc, contract))]).toEqual([]);
  });

  it('holds every route the service registered, with its security', async () => {
    const routes = controllersOf(svc).flatMap(routesOf);
    expect(routes.length).toBeGreaterThan(35);
    for (const r of routes) {
      const op = doc.paths[r.path]?.[r.method];
      expect({ route: `${r.method} ${r.path}`, documented: !!op }).toEqual({ route: `${r.method} ${r.path}`, documented: true });
    }
    expect(doc.components.securitySchemes).toEqual({
      ApiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      ApiKeyQuery: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'apiKey' }),
      AdminToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(doc.paths['/admin/tenants'].post.security).toEqual([{ AdminToken: [] }]);
    expect(doc.paths['/projections/{id}/stream'].get.security).toEqual([{ ApiKey: ['state:read'] }, { ApiKeyQuery: ['state:read'] }]);
    expect(doc.paths['/health/ready'].get.security).toEqual([]);
  });

  it("takes each request DTO's schema from class-validator-jsonschema, over the class the route validates with", () => {
    const dtos = new Map<string, Type<object>>();
    for (const r of controllersOf(svc).flatMap(routesOf)) {
      if (!r.bodyDto) continue;
      dtos.set(r.bodyDto.name, r.bodyDto);
      // The element DTOs its pipe checks array items against (AppendBatchDto.NESTED: EventBodyDto).
      for (const element of Object.values((r.bodyDto as { NESTED?: Record<string, Type<object>> }).NESTED ?? {}))
        dtos.set(element.name, element);
      expect(doc.paths[r.path][r.method].requestBody.content['application/json'].schema).toEqual({
        $ref: `#/components/schemas/${r.bodyDto.name}`,
      });
    }
    // The routes' DTOs as found (at least these: a DTO a route stopped naming would drop out of the document).
    expect([...dtos.keys()]).toEqual(
      expect.arrayContaining([
        'AppendBatchDto',
        'AppendEventDto',
        'AppendTransactionDto',
        'QueryEventsDto',
        'TransactionEventDto',
        'BindAggregateTypeDto',
        'EventBodyDto',
        'ReplayDeliveriesDto',
        'ResumeWebhookDto',
      ]),
    );
    for (const [name, dto] of dtos) {
      expect(doc.components.schemas[name]).toEqual(targetConstructorToSchema(dto, { refPointerPrefix: '#/components/schemas/' }));
    }
    expect(doc.components.schemas.AppendEventDto.required).toEqual(expect.arrayContaining(['aggregateId', 'eventType', 'data']));
  });

  it("describes the service's real answers: each body matches its response schema", async () => {
    const key = { 'x-api-key': a.key };
    const at = (p: string) => `${svc.url}${p}`;
    await check('POST', '/events', a.post('/events', { aggregateId: 'o-1', eventType: 'Placed', data: { n: 1 } }), 201);
    await check(
      'POST',
      '/events/batch',
      a.post('/events/batch', { aggregateId: 'o-1', events: [{ eventType: 'A', data: {} }], metadata: { m: 1 }, correlationId: 'c' }),
      201,
    );
    await check('GET', '/events/{aggregateId}', a.get('/events/o-1?limit=1'));
    // Issue 28: tags on reads, the DCB query, conditions and transactions.
    await check('POST', '/events', a.post('/events', { aggregateId: 'o-2', eventType: 'Placed', data: {}, tags: ['customer:1'] }), 201);
    await check('GET', '/events/{aggregateId}', a.get('/events/o-2'));
    await check('POST', '/events/query', a.post('/events/query', { items: [{ tags: ['customer:1'] }] }), 200);
    await check('POST', '/events/query', a.post('/events/query', { items: [{}], direction: 'backward', limit: 1 }), 200);
    await check('POST', '/events/query', a.post('/events/query', { items: [] }), 400);
    const condition = { failIfEventsMatch: { items: [{ tags: ['customer:1'] }] }, after: 0 };
    await check('POST', '/events', a.post('/events', { aggregateId: 'o-3', eventType: 'Placed', data: {}, condition }), 409);
    const transaction = {
      events: [
        { aggregateId: 'o-4', eventType: 'Placed', data: {}, tags: ['customer:2'] },
        { aggregateId: 's-4', eventType: 'Reserved', data: {} },
      ],
    };
    await check('POST', '/events/transaction', a.post('/events/transaction', transaction), 201);
    await check('POST', '/events/transaction', a.post('/events/transaction', { ...transaction, expectedVersions: { 'o-4': 0 } }), 409);
    await check('POST', '/events/transaction', a.post('/events/transaction', { ...transaction, condition }), 409);
    await check('POST', '/events/transaction', a.post('/events/transaction', { events: [] }), 400);
    await check('POST', '/events', a.post('/events', { aggregateId: 'o-1', eventType: 'Placed', data: {}, expectedVersion: 0 }), 409);
    await check('POST', '/events', request(at('/events'), 'POST', { aggregateId: 'o-1' }, key), 400);
    await check('GET', '/aggregate-types/{type}/{id}/state', a.get('/aggregate-types/order/o-1/state'), 404);
    await check('GET', '/reducers/{id}/status', a.get('/reducers/nope/status'), 404);
    await check('GET', '/projections', a.get('/projections'));
    await check('GET', '/projections/{id}/state/{key}', a.get('/projections/nope/state/k'), 404);
    await check('GET', '/projections/{id}/status', a.get('/projections/nope/status'), 404);
    await check('POST', '/webhooks/rotate', a.post('/webhooks/rotate', undefined));
    await check('GET', '/auth/whoami', a.get('/auth/whoami'));
    await check('GET', '/auth/whoami', request(at('/auth/whoami'), 'GET', undefined, { 'x-api-key': 'esk_wrong' }), 401);
    const made = request(at('/auth/keys'), 'POST', { scopes: ['events:read'], name: 'reader' }, key);
    await check('POST', '/auth/keys', made, 201);
    await check('GET', '/auth/keys', a.get('/auth/keys'));
    const reader = { 'x-api-key': (await made).body.apiKey };
    await check('GET', '/auth/keys', request(at('/auth/keys'), 'GET', undefined, reader), 403);
    await check('POST', '/auth/keys', request(at('/auth/keys'), 'POST', { scopes: 'all', name: 'x' }, key), 400);
    await check('DELETE', '/auth/keys/{keyId}', request(at('/auth/keys/key_nope'), 'DELETE', undefined, key), 404);
    await check('GET', '/health', request(at('/health'), 'GET'));
    // 503 while the executors start, then 200: both answers are the Readiness shape.
    const first = await request(at('/health/ready'), 'GET');
    await check('GET', '/health/ready', Promise.resolve(first), first.status === 503 ? 503 : 200);
    const ready = await until(
      () => request(at('/health/ready'), 'GET'),
      (r) => r.status === 200,
      60_000,
      'readiness',
    );
    await check('GET', '/health/ready', Promise.resolve(ready));
    await check('POST', '/admin/tenants', request(at('/admin/tenants'), 'POST', { name: 'b' }, admin), 201);
    await check('GET', '/admin/tenants', request(at('/admin/tenants'), 'GET', undefined, admin));
    const tenant = `/admin/tenants/${a.tenantId}`;
    await check('POST', '/admin/tenants/{tenantId}/keys', request(at(`${tenant}/keys`), 'POST', undefined, admin), 201);
    const scoped = request(at(`${tenant}/keys`), 'POST', { scopes: ['deploy'], name: 'ci' }, admin);
    await check('POST', '/admin/tenants/{tenantId}/keys', scoped, 201);
    await check('GET', '/admin/tenants/{tenantId}/limits', request(at(`${tenant}/limits`), 'GET', undefined, admin));
    const limits = { streams: 500, uploads: { quota: 60, windowSeconds: 3600 } };
    await check('PUT', '/admin/tenants/{tenantId}/limits', request(at(`${tenant}/limits`), 'PUT', limits, admin));
    await check('GET', '/admin/lanes', request(at('/admin/lanes'), 'GET', undefined, admin));
  });

  it('describes the answers of a compiled reducer and projection (current and earlier shapes)', async () => {
    const upload = async (p: string, parts: Record<string, string>, sources = exampleSources('customer-totals')) => {
      const form = new FormData();
      form.append('file', new Blob([zipSources(sources)], { type: 'application/zip' }), 'code.zip');
      for (const [name, value] of Object.entries(parts)) form.append(name, value);
      const res = await fetch(`${svc.url}${p}`, { method: 'POST', headers: { 'x-api-key': a.key }, body: form });
      return { status: res.status, body: (await res.json()) as any };
    };
    // Reducer: upload, record, binding, state with the append.
    await check('POST', '/reducers/upload', upload('/reducers/upload', { reducerId: 'bank' }, exampleSources('bank-account')), 202);
    const compiled = await until(
      () => a.get('/reducers/bank/status'),
      (r) => r.body.status !== 'pending_compilation',
      120_000,
      'compile',
    );
    expect(compiled.body.status).toBe('compiled');
    await check('GET', '/reducers/{id}/status', Promise.resolve(compiled));
    await check(
      'PUT',
      '/aggregate-types/{type}',
      request(`${svc.url}/aggregate-types/account`, 'PUT', { reducerId: 'bank' }, { 'x-api-key': a.key }),
    );
    await check('GET', '/aggregate-types/{type}', a.get('/aggregate-types/account'));
    await check('GET', '/aggregate-types', a.get('/aggregate-types'));
    await check('GET', '/reducers', a.get('/reducers'));
    await check(
      'POST',
      '/events',
      a.post('/events', { aggregateId: 'account-1', eventType: 'AccountOpened', data: { owner: 'ada' } }),
      201,
    );
    await check('GET', '/aggregate-types/{type}/{id}/state', a.get('/aggregate-types/account/account-1/state'));

    // Projection: both upload answers, status with lag, state, keys, lanes, notifications, webhook operations.
    const config = JSON.stringify({ notifications: { webhook: { url: receiver.url, isolateSecret: true }, sse: true } });
    const current = await upload('/projections/upload', { config });
    await check('POST', '/projections/upload', Promise.resolve(current), 202);
    expect(current.body.projectionId).toBeNull();
    const status = await until(
      () => a.get(`/projections/${current.body.uploadId}/status`),
      (r) => r.body.type === 'runtime',
      120_000,
      'deploy',
    );
    const id = status.body.projectionId as string;
    await a.post('/events', {
      aggregateId: 'order-1',
      eventType: 'OrderPlaced',
      data: { customerId: 'c-1', lines: [{ sku: 'a', qty: 1, price: 2 }] },
    });
    const state = await until(
      () => a.get(`/projections/${id}/state/c-1`),
      (r) => r.status === 200,
      60_000,
      'state',
    );
    await check('GET', '/projections/{id}/state/{key}', Promise.resolve(state));
    await check('GET', '/projections/{id}/status', a.get(`/projections/${id}/status?include=lag`));
    await check('GET', '/projections', a.get('/projections'));
    await check('GET', '/projections/{id}/keys', a.get(`/projections/${id}/keys`));
    await check('GET', '/projections/{id}/lanes', a.get(`/projections/${id}/lanes`));
    await check('GET', '/projections/{id}/notifications', a.get(`/projections/${id}/notifications?afterSequence=0`));
    await check('POST', '/projections/{id}/lanes/{key}/retry', a.post(`/projections/${id}/lanes/c-1/retry`, undefined), 400);
    await check('GET', '/projections/{id}/webhook', a.get(`/projections/${id}/webhook`));
    await check('GET', '/projections/{id}/webhook/deliveries', a.get(`/projections/${id}/webhook/deliveries`));
    await check('POST', '/projections/{id}/webhook/deliveries/replay', a.post(`/projections/${id}/webhook/deliveries/replay`, {}));
    await check('POST', '/projections/{id}/webhook/resume', a.post(`/projections/${id}/webhook/resume`, {}), 409);
    await check('POST', '/projections/{id}/webhook/rotate', a.post(`/projections/${id}/webhook/rotate`, undefined));
    // The earlier upload shape last: it redeploys the same projection (a pending version, then promoted).
    const earlier = await upload('/projections/upload', { notificationConfig: JSON.stringify({ sse: true }) });
    await check('POST', '/projections/upload', Promise.resolve(earlier), 202);
    expect(earlier.body).toEqual({ projectionId: expect.any(String), uploadId: expect.any(String), status: 'pending_compilation' });
  });

  it('serves a reference page at /docs that renders /openapi.json with assets from the service itself', async () => {
    const res = await fetch(`${svc.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain('/openapi.json');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).filter((u) => u !== '/openapi.json');
    expect(assets).toEqual(expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']));
    // No CDN: every asset is the service's own.
    expect(assets.every((u) => u.startsWith('/docs/'))).toBe(true);
    for (const asset of assets) {
      const r = await fetch(`${svc.url}${asset}`);
      const body = await r.text();
      expect({ asset, status: r.status, empty: body.length === 0 }).toEqual({ asset, status: 200, empty: false });
    }
    const init = await (await fetch(`${svc.url}/docs/docs-init.js`)).text();
    expect(init).toContain("url: '/openapi.json'");
    const bundle = await fetch(`${svc.url}/docs/swagger-ui-bundle.js`);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
  });

  it('serves only its listed assets under /docs/', async () => {
    for (const p of ['/docs/nope.js', '/docs/package.json', '/docs/..%2F..%2Fpackage.json', '/docs/index.html']) {
      const r = await request(`${svc.url}${p}`, 'GET');
      expect({ p, status: r.status, error: r.body?.error }).toEqual({ p, status: 404, error: 'NOT_FOUND' });
    }
  });
});

/** The controllers the running service registered (what the document is built from, seen from outside it). */
function controllersOf(svc: Svc): Type<object>[] {
  return svc.app
    .get(DiscoveryService, { strict: false })
    .getControllers()
    .map((w) => w.metatype as Type<object>)
    .filter(Boolean);
}

type AnswerCheck = (method: string, template: string, answer: Promise<{ status: number; body: any }>, status?: number) => Promise<void>;

/**
 * Checks a real answer against the document: its status is the one expected (200 unless said) and
 * its body validates against that status's JSON schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 has it).
 */
function answerCheck(doc: Record<string, any>): AnswerCheck {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi');
  return async (method, template, answer, expected = 200) => {
    const { status, body } = await answer;
    const call = `${method} ${template}`;
    expect({ call, status, body: status === expected ? 'as expected' : body }).toEqual({ call, status: expected, body: 'as expected' });
    const op = operationOf(doc, method, template);
    const pointer = `openapi#/paths/${template.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`;
    const validate = op?.responses?.[status]?.content?.['application/json']?.schema ? ajv.getSchema(pointer) : undefined;
    const errors = validate ? (validate(body) ? [] : validate.errors) : [`no JSON schema for ${status}`];
    expect({ call, status, errors }).toEqual({ call, status, errors: [] });
  };
}
