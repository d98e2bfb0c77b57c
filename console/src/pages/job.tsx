import { PageTitle } from '../components/ui.js';

export function JobPage(props: { id: string }) {
  void props;
  return <PageTitle>JobPage</PageTitle>;
}
