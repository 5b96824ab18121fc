/*
 * fwname.h -- the training stacks --framework names, as bits of a mask.
 * What each one exports is framework.h's; this side needs nothing of a
 * job, so the command line can parse the names.
 */
#ifndef DT_FWNAME_H
#define DT_FWNAME_H

struct dt_err;

#define FW_PYTORCH	0x01
#define FW_TENSORFLOW	0x02
#define FW_MXNET	0x04
#define FW_HOROVOD	0x08
#define FW_MPI		0x10
#define FW_ALL		0x1f
#define FW_NONE		0x80	/* "none" was given: only DTRUN_* */
#define FW_DEFAULT	FW_PYTORCH	/* without --framework */

/*
 * Adds the frameworks of a comma-separated list ("tensorflow,mpi") to
 * *mask. Returns 0, or DT_ERR_INVAL with e naming the unknown name, the
 * closest known one, and the list of known names.
 */
int	fw_parse(const char *list, unsigned *mask, struct dt_err *e);

/*
 * Checks a mask built by fw_parse: "none" may not be combined with a
 * framework. Returns 0 or DT_ERR_INVAL.
 */
int	fw_check(unsigned mask, struct dt_err *e);

#endif
