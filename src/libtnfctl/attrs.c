// SPDX-License-Identifier: BSD-2-Clause
/* tnfctl_trace_attrs_get (tnfctl_trace_attrs_get(3TNF)). */
#include "internal.h"

TNF_API tnfctl_errcode_t tnfctl_trace_attrs_get(tnfctl_handle_t *h, tnfctl_trace_attrs_t *attrs)
{
	if (!h || !attrs)
		return TNFCTL_ERR_BADARG;
	pthread_mutex_lock(&h->lock);
	/* Internal handles have no stops to refresh at: read the runtime now. */
	if (h->pr.mode == TNF_MODE_INTERNAL)
		tnf_attrs_refresh(h);
	*attrs = h->attrs;
	pthread_mutex_unlock(&h->lock);
	return TNFCTL_ERR_NONE;
}
