import { PageTitle } from '../components/ui.js';

export function Jobs(props: { query: URLSearchParams }) {
  void props;
  return <PageTitle>Jobs</PageTitle>;
}
