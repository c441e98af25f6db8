import { Infer, integer, nullable, object, oneOfStrings, string } from './json-schema';

/**
 * One compile or validate diagnostic (issue 27, shared by every slice): compiler errors and warnings
 * and the sandbox's refusals alike. line/column are 1-based, null with the file when there is no location.
 */
export const DIAGNOSTIC_SCHEMA = object(
  {
    severity: oneOfStrings(['error', 'warning'] as const),
    code: string({
      description: 'CSxxxx (compiler), ES0001 (forbidden API), ES0002 (forbidden construct), ES0003 (invalid implementation)',
    }),
    message: string(),
    file: nullable(string({ description: 'path inside the archive' })),
    line: nullable(integer()),
    column: nullable(integer()),
  },
  {
    hint: string({
      description: 'why a compiler error is likely the sandbox’s doing (a refused namespace or API, a source generator that is not run)',
    }),
  },
);
export type Diagnostic = Infer<typeof DIAGNOSTIC_SCHEMA>;
