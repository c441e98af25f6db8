import { Controller, Get } from '@nestjs/common';
import { AdminApi } from '../tenancy/public.decorator';
import { AdminLanesView } from './admin-lanes-view';

/**
 * What the lanes of this instance and the store hold that no projection owns. After a delete or a
 * redeploy has settled (a sweep), both name only live versions.
 */
@AdminApi()
@Controller('admin/lanes')
export class AdminLanesController {
  constructor(private readonly lanesView: AdminLanesView) {}

  @Get()
  async view() {
    return this.lanesView.read();
  }
}
