import { DtoValidationPipe } from '../common/dto-validation.pipe';
import { BindAggregateTypeDto } from './bind-aggregate-type.dto';

const pipe = new DtoValidationPipe(BindAggregateTypeDto, { nonObjectAsEmpty: true });

function refusal(body: unknown): unknown {
  try {
    pipe.transform(body);
  } catch (e) {
    return e;
  }
  return undefined;
}

describe('BindAggregateTypeDto', () => {
  it('takes a reducerId and an optional className', () => {
    expect(pipe.transform({ reducerId: 'bank-v2' })).toMatchObject({ reducerId: 'bank-v2' });
    expect(pipe.transform({ reducerId: 'bank-v2', className: 'Bank.Account', extra: 1 })).toMatchObject({
      reducerId: 'bank-v2',
      className: 'Bank.Account',
    });
  });

  it('refuses a missing, empty or non-string reducerId as required, whatever the body is', () => {
    for (const body of [{}, { reducerId: '' }, { reducerId: 5 }, null, undefined, [], 'x']) {
      expect(refusal(body)).toMatchObject({
        code: 'VALIDATION_FAILED',
        message: 'reducerId: is required',
        details: { field: 'reducerId' },
      });
    }
  });

  it('refuses a className that is present but not a string (null included)', () => {
    for (const className of [null, 3, {}]) {
      expect(refusal({ reducerId: 'r', className })).toMatchObject({
        message: 'className: must be a string',
        details: { field: 'className' },
      });
    }
  });
});
