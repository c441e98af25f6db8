import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { IntQueryPipe } from '../common/int-query.pipe';
import { AppendBatchDto, EventBodyDto } from '../events/event-input.dto';
import { Public } from '../tenancy/public.decorator';
import { ApiOperation } from '../common/api-docs';
import { HEALTH_SCHEMA } from '../health/readiness';
import { buildOpenApiDocument } from './openapi-document';
import { routesOf } from './route-catalog';
import { appRoutes as allAppRoutes } from '../../test/support/app-controllers';

@Controller('things')
class ThingsController {
  @Get()
  @ApiOperation({ tag: 'events', summary: 'list', responses: { 200: { description: 'ok', schema: HEALTH_SCHEMA } } })
  list(@Query('limit', new IntQueryPipe('limit', 10, 1, 50)) _limit: number) {}

  @Public()
  @Post('batch')
  @HttpCode(202)
  @ApiOperation({ tag: 'events', summary: 'add', responses: { 202: { description: 'accepted' } } })
  add(@Body(new DtoValidationPipe(AppendBatchDto)) _body: AppendBatchDto) {}
}

@Controller('others')
class UndescribedController {
  @Get()
  @ApiOperation({ tag: 'system', summary: 'described', responses: { 200: { description: 'ok' } } })
  described() {}

  @Post()
  undescribed() {}
}

@Controller('metrics')
class OptionalController {
  @Get()
  @ApiOperation({ tag: 'system', summary: 'm', onlyWhen: 'METRICS_ENABLED is not false', responses: { 200: { description: 'ok' } } })
  metrics() {}
}

@Controller('wrong')
class WrongStatusController {
  @Post()
  @HttpCode(202)
  @ApiOperation({ tag: 'events', summary: 'add', responses: { 201: { description: 'created' } } })
  add() {}
}

describe('the OpenAPI document', () => {
  const appRoutes = allAppRoutes();

  it('describes every route of the app: every handler has its @ApiOperation', () => {
    const doc = buildOpenApiDocument(appRoutes, '1.0.0');
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/events', '/projections/{id}/state/{key}', '/admin/lanes', '/docs']));
    expect(Object.keys(doc.paths)[0]).toBe('/events');
  });

  it('refuses a route whose handler has no @ApiOperation, naming it', () => {
    const routes = [...routesOf(ThingsController), ...routesOf(UndescribedController)];
    expect(() => buildOpenApiDocument(routes, '1')).toThrow(/POST \/others \(UndescribedController.undescribed\): no @ApiOperation/);
  });

  it('says in its description that an operation exists only in some configuration', () => {
    const op = buildOpenApiDocument(routesOf(OptionalController), '1').paths['/metrics'].get as any;
    expect(op.description).toBe('Only when METRICS_ENABLED is not false.');
  });

  it('refers to a named response shape by its name, and writes any other in place', () => {
    const doc = buildOpenApiDocument(routesOf(ThingsController), '1');
    expect((doc.paths['/things'].get as any).responses[200].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Health',
    });
  });

  it('refuses an operation that leaves out the status the route answers on success', () => {
    expect(() => buildOpenApiDocument(routesOf(WrongStatusController), '1')).toThrow(/WrongStatusController.add: answers 202/);
  });

  it("takes a request body's schema from the class its DtoValidationPipe validates with, element DTOs included", () => {
    const doc = buildOpenApiDocument(routesOf(ThingsController), '1');
    const op = doc.paths['/things/batch'].post as any;
    expect(op.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/AppendBatchDto' });
    const options = { refPointerPrefix: '#/components/schemas/' };
    expect(doc.components.schemas.AppendBatchDto).toEqual(targetConstructorToSchema(AppendBatchDto, options));
    expect(doc.components.schemas.EventBodyDto).toEqual(targetConstructorToSchema(EventBodyDto, options));
    expect((doc.components.schemas.AppendBatchDto as any).properties.events.items).toEqual({ $ref: '#/components/schemas/EventBodyDto' });
    expect((doc.components.schemas.AppendBatchDto as any).required).toEqual(expect.arrayContaining(['aggregateId', 'events']));
  });

  it('describes an integer query parameter with the bounds and default of the pipe that checks it', () => {
    const doc = buildOpenApiDocument(routesOf(ThingsController), '1');
    expect((doc.paths['/things'].get as any).parameters).toEqual([
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 50, default: 10 } },
    ]);
  });

  it('adds the errors a route shares with its kind, each under the status the error mapping gives it', () => {
    const doc = buildOpenApiDocument(appRoutes, '1.0.0');
    const codes = (op: any, status: number) => op.responses[status].content['application/json'].schema.allOf[1].properties.error.enum;
    const state = doc.paths['/aggregate-types/{type}/{id}/state'].get as any;
    expect(codes(state, 404)).toEqual(['NO_REDUCER_BOUND', 'NOT_FOUND']);
    expect(codes(state, 401)).toEqual(['UNAUTHORIZED']);
    const append = doc.paths['/events'].post as any;
    expect(codes(append, 429)).toEqual(['RATE_LIMITED']);
    expect(codes(append, 415)).toEqual(['UNSUPPORTED_MEDIA_TYPE']);
    const admin = doc.paths['/admin/lanes'].get as any;
    expect(codes(admin, 403)).toEqual(['ADMIN_DISABLED']);
    expect(admin.security).toEqual([{ AdminToken: [] }]);
    const stream = doc.paths['/projections/{id}/stream'].get as any;
    expect(stream.security).toEqual([{ ApiKey: ['state:read'] }, { ApiKeyQuery: ['state:read'] }]);
    expect(codes(stream, 403)).toEqual(['FORBIDDEN']);
    expect((doc.paths['/auth/whoami'].get as any).security).toEqual([{ ApiKey: [] }]);
    expect((doc.paths['/health'].get as any).security).toEqual([]);
    expect((doc.paths['/health'].get as any).responses[401]).toBeUndefined();
  });
});
