/* placeholder until the reader lands */
int tnf_reader_placeholder;
