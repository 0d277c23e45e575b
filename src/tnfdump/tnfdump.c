#include <stdio.h>
int main(void)
{
	fputs("tnfdump: not implemented yet\n", stderr);
	return 1;
}
