import { PipeTransform } from '@nestjs/common';
import { validationFailed } from '../common/domain-error';
import { aggregateIdProblem } from './aggregate-id';

/**
 * An aggregate id path parameter (already percent-decoded by the router: `acct%2F42` is `acct/42`),
 * checked before the handler runs by the same rule as a body's (VALIDATION_FAILED, field aggregateId).
 */
export class AggregateIdPipe implements PipeTransform<string, string> {
  constructor(private readonly field = 'aggregateId') {}

  transform(aggregateId: string): string {
    const problem = aggregateIdProblem(aggregateId);
    if (problem) throw validationFailed(this.field, problem);
    return aggregateId;
  }
}
