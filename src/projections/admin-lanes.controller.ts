import { Controller, Get } from '@nestjs/common';
import { AdminApi } from '../tenancy/public.decorator';
import { ADMIN_LANES_SCHEMA, AdminLanesView } from './admin-lanes-view';
import { ApiOperation, json } from '../common/api-docs';

/**
 * What the lanes of this instance and the store hold that no projection owns. After a delete or a
 * redeploy has settled (a sweep), both name only live versions.
 */
@AdminApi()
@Controller('admin/lanes')
export class AdminLanesController {
  constructor(private readonly lanesView: AdminLanesView) {}

  @Get()
  @ApiOperation({
    tag: 'admin',
    summary: "This instance's lane routers and the store's lane rows no projection owns",
    responses: { 200: json('the lanes view', ADMIN_LANES_SCHEMA) },
  })
  async view() {
    return this.lanesView.read();
  }
}
