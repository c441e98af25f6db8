import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { openStore } from './store.factory';
import { STORE, Store } from './store.port';
import { UploadRepository } from './upload-repository.port';

@Global()
@Module({
  providers: [
    { provide: STORE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => openStore(config) },
    // uploads (tenant-code, compilation)
    { provide: UploadRepository, inject: [STORE], useFactory: (s: Store) => s.uploads },
  ],
  exports: [STORE, UploadRepository],
})
export class StoreModule implements OnApplicationShutdown {
  constructor(@Inject(STORE) private readonly store: Store) {}

  // After the HTTP server has closed (Nest runs shutdown hooks after dispose), so in-flight
  // appends have finished; close() still waits for any write in progress.
  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
