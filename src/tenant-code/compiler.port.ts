import { UploadKind } from '../store/upload-repository.port';
import { CompileResult } from './host/runtime-protocol';

/**
 * What compiles an upload's sources. One adapter, RuntimePool (a free compiler host of its
 * CompilerPool; TenantCodeModule binds it). Caller: CompileWorker (compilation/).
 */
export abstract class Compiler {
  abstract compile(files: { path: string; content: string }[], kind?: UploadKind): Promise<CompileResult>;
}
