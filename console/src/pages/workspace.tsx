import { PageTitle } from '../components/ui.js';

export function Workspace() {
  return <PageTitle>Workspace</PageTitle>;
}
