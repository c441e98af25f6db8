import 'reflect-metadata';
import { getMetadataStorage, validateSync } from 'class-validator';
import { compileDtoCheck } from './compiled-dto-check';
import { validateDto } from './dto-validation.pipe';
import { AppendBatchDto, AppendEventDto, EventBodyDto } from '../events/event-input.dto';
import { CreateEventWebhookDto, ReplayEventWebhookDto } from '../event-webhooks/event-webhook.dto';
import { ReplayDeliveriesDto } from '../notifications/webhooks/replay-deliveries.dto';
import { ResumeWebhookDto } from '../notifications/webhooks/resume-webhook.dto';
import { BindAggregateTypeDto } from '../reducers/bind-aggregate-type.dto';

/** Values near every rule's edges: types, empties, lengths, patterns, controls, surrogates, ranges. */
const VALUES: unknown[] = [
  undefined,
  null,
  '',
  'a',
  'acct-1',
  'Deposited',
  'Money.Deposited:v2/x+y-z_1',
  '-leading',
  'has space',
  'x'.repeat(100),
  'x'.repeat(101),
  'x'.repeat(200),
  'x'.repeat(201),
  'x'.repeat(256),
  'x'.repeat(257),
  'é'.repeat(128),
  'é'.repeat(129),
  '\u0000',
  'a\u0085b',
  '\ud800',
  '😀',
  '\ufe0f',
  'https://example.com/hook',
  'http://localhost:1/x',
  'not a url',
  0,
  1,
  -1,
  1.5,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  NaN,
  true,
  {},
  { a: 1 },
  [],
  [{ eventType: 'A', data: {} }],
  ['x'],
  ['events:read'],
];

const PLAUSIBLE: Record<string, unknown> = {
  aggregateId: 'acct-1',
  aggregateType: 'Account',
  expectedVersion: 3,
  correlationId: 'c-1',
  causationId: 'c-2',
  metadata: { a: 1 },
  eventType: 'Deposited',
  data: { amount: 1 },
  events: [{ eventType: 'A', data: {} }],
};

const DTOS = [
  AppendEventDto,
  AppendBatchDto,
  EventBodyDto,
  CreateEventWebhookDto,
  ReplayEventWebhookDto,
  ReplayDeliveriesDto,
  ResumeWebhookDto,
  BindAggregateTypeDto,
];

/** A small deterministic generator (the corpus is the same on every run). */
function rng(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

describe('compileDtoCheck', () => {
  it.each(DTOS.map((d) => [d.name, d] as const))('%s: says yes exactly when validateSync finds nothing', (_, dto) => {
    const check = compileDtoCheck(dto);
    const props = [
      ...new Set(
        getMetadataStorage()
          .getTargetValidationMetadatas(dto, '', false, false, undefined)
          .map((m) => m.propertyName),
      ),
    ];
    const next = rng(props.length * 7919 + dto.name.length);
    let yes = 0;
    let no = 0;
    for (let i = 0; i < 4000; i++) {
      const body: Record<string, unknown> = {};
      // Mostly a plausible value (when known) so that both answers are common.
      for (const p of props) {
        const v = p in PLAUSIBLE && next() < 0.85 ? PLAUSIBLE[p] : VALUES[Math.floor(next() * VALUES.length)];
        if (v !== undefined) body[p] = v;
      }
      const instance = Object.assign(new dto(), body);
      const valid = validateSync(instance, { forbidUnknownValues: false }).length === 0;
      if (check) expect([JSON.stringify(body), check(instance)]).toEqual([JSON.stringify(body), valid]);
      if (valid) yes++;
      else no++;
    }
    expect(no).toBeGreaterThan(0);
    // The DTOs this service validates on hot routes compile.
    if (dto === AppendEventDto || dto === AppendBatchDto || dto === EventBodyDto) {
      expect(check).not.toBeNull();
      expect(yes).toBeGreaterThan(0);
    }
  });

  it('a valid append passes the compiled rules and an invalid one keeps its exact message', () => {
    expect(validateDto(AppendEventDto, { aggregateId: 'a', eventType: 'E', data: {} })).toBeInstanceOf(AppendEventDto);
    expect(() => validateDto(AppendEventDto, { aggregateId: 'a', eventType: ' E', data: {} })).toThrow(
      'eventType: must start with a letter or digit and hold only letters, digits and . _ : / + -',
    );
    expect(() => validateDto(AppendEventDto, { aggregateId: 'a', eventType: 'E', data: [] })).toThrow(/data/);
    expect(() => validateDto(AppendBatchDto, { aggregateId: 'a', events: [{ eventType: 'E' }] })).toThrow(/events\[0\]\.data/);
  });
});
