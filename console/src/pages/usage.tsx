import { PageTitle } from '../components/ui.js';

export function Usage(props: { query: URLSearchParams }) {
  void props;
  return <PageTitle>Usage</PageTitle>;
}
